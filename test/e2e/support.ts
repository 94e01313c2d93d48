// End-to-end helpers: start the REAL executable (bin/cloud-route-controller.js
// on the pinned Node) as a child process, read its JSON log, its HTTP
// endpoints, and the memory cloud's shared state file and call log.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const BIN = path.join(ROOT, 'bin', 'cloud-route-controller.js');

/** The pinned Node 24 (the tests themselves run on it). */
export function pinnedNode(): string {
  const pinned = path.join(ROOT, 'node_modules', 'node', 'bin', 'node');
  return fs.existsSync(pinned) ? pinned : process.execPath;
}

/** Short leader election for tests: lease 4 s, renew deadline 3 s, retry 500 ms. */
export const FAST_LEASE = [
  '--leader-elect-lease-duration=4s',
  '--leader-elect-renew-deadline=3s',
  '--leader-elect-retry-period=500ms',
];
export const LEASE_MS = 4_000;

export function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
  };
  for (const k of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy', 'KUBECONFIG', 'NODE_OPTIONS'])
    delete env[k];
  // Without this, the test runner's child inherits NODE_TEST_CONTEXT and reports to it.
  delete env['NODE_TEST_CONTEXT'];
  return env;
}

export interface CloudFiles {
  readonly dir: string;
  readonly config: string;
  readonly stateFile: string;
  readonly callLog: string;
}

/** A memory cloud shared through files, as `--cloud-config` for every replica. */
export function memoryCloud(latency = '20ms'): CloudFiles {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'routectl-e2e-'));
  const stateFile = path.join(dir, 'routes.json');
  const callLog = path.join(dir, 'calls.jsonl');
  const config = path.join(dir, 'cloud.yaml');
  fs.writeFileSync(config, `latency: ${latency}\nstateFile: ${stateFile}\ncallLog: ${callLog}\n`);
  return { dir, config, stateFile, callLog };
}

export interface CallRecord {
  readonly op: 'list' | 'create' | 'delete';
  readonly pid: number;
  readonly start: number;
  readonly end: number;
  readonly outcome: string;
  readonly destinationCIDR?: string;
  readonly targetNode?: string;
}

export function calls(cloud: CloudFiles): CallRecord[] {
  if (!fs.existsSync(cloud.callLog)) return [];
  return fs
    .readFileSync(cloud.callLog, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as CallRecord);
}

/** The cloud's routes as sorted `cidr->node`. */
export function routes(cloud: CloudFiles): string[] {
  if (!fs.existsSync(cloud.stateFile)) return [];
  const rs = JSON.parse(fs.readFileSync(cloud.stateFile, 'utf8')) as {
    destinationCIDR: string;
    targetNode: string;
  }[];
  return rs.map((r) => `${r.destinationCIDR}->${r.targetNode}`).sort();
}

/**
 * Each pid's calls span [first start, last end]; these windows must be
 * disjoint: two replicas never act at the same time. Returns the pids in the
 * order they acted.
 */
export function assertSingleWriter(records: readonly CallRecord[]): number[] {
  const windows = new Map<number, { start: number; end: number }>();
  for (const r of records) {
    const w = windows.get(r.pid);
    windows.set(
      r.pid,
      w ? { start: Math.min(w.start, r.start), end: Math.max(w.end, r.end) } : { start: r.start, end: r.end },
    );
  }
  const ordered = [...windows].sort((a, b) => a[1].start - b[1].start);
  for (let i = 1; i < ordered.length; i++) {
    const [prevPid, prev] = ordered[i - 1]!;
    const [pid, cur] = ordered[i]!;
    if (cur.start <= prev.end) {
      throw new Error(
        `replicas ${prevPid} [${prev.start}, ${prev.end}] and ${pid} [${cur.start}, ${cur.end}] called the cloud at the same time`,
      );
    }
  }
  return ordered.map(([pid]) => pid);
}

export interface LogRecord {
  readonly level: string;
  readonly msg: string;
  readonly ts: number;
  readonly [key: string]: unknown;
}

export class Daemon {
  readonly child: ChildProcess;
  readonly logFile: string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;

  private constructor(child: ChildProcess, logFile: string) {
    this.child = child;
    this.logFile = logFile;
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      });
    });
  }

  /** Starts `cloud-route-controller <args>` with output (JSON log) in `logFile`. */
  static start(args: readonly string[], logFile: string): Daemon {
    const fd = fs.openSync(logFile, 'a');
    try {
      const child = spawn(pinnedNode(), [BIN, ...withoutSecurePort(args)], {
        stdio: ['ignore', fd, fd],
        env: childEnv(),
        cwd: ROOT,
      });
      return new Daemon(child, logFile);
    } finally {
      fs.closeSync(fd);
    }
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  output(): string {
    return fs.existsSync(this.logFile) ? fs.readFileSync(this.logFile, 'utf8') : '';
  }

  logs(): LogRecord[] {
    const out: LogRecord[] = [];
    for (const line of this.output().split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        out.push(JSON.parse(line) as LogRecord);
      } catch {
        // a partial last line
      }
    }
    return out;
  }

  /** The port an endpoint bound (logged as `Serving <label>`). */
  async port(label: 'metrics' | 'health probes' | 'securely', timeoutMs = 30_000): Promise<number> {
    let port = 0;
    await this.waitForLog(`Serving ${label}`, timeoutMs, (r) => {
      port = Number(/:(\d+)$/.exec(String(r['address']))?.[1] ?? 0);
      return port > 0;
    });
    return port;
  }

  async waitForLog(
    msg: string | RegExp,
    timeoutMs: number,
    pred: (r: LogRecord) => boolean = () => true,
  ): Promise<LogRecord> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.logs().find(
        (r) => (typeof msg === 'string' ? r.msg === msg : msg.test(r.msg)) && pred(r),
      );
      if (hit) return hit;
      if (this.exitInfo)
        throw new Error(
          `daemon ${this.pid} exited (${JSON.stringify(this.exitInfo)}) before logging "${String(msg)}":\n${this.tail()}`,
        );
      if (Date.now() > deadline)
        throw new Error(
          `daemon ${this.pid} did not log "${String(msg)}" within ${timeoutMs} ms:\n${this.tail()}`,
        );
      await sleep(100);
    }
  }

  tail(lines = 30): string {
    return this.output().split('\n').slice(-lines).join('\n');
  }

  signal(sig: NodeJS.Signals): void {
    if (!this.exitInfo) this.child.kill(sig);
  }

  /** SIGKILL if still running; for test clean-up. */
  async kill(): Promise<void> {
    if (this.exitInfo) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }

  async waitExit(timeoutMs: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        this.exited,
        new Promise<never>((_r, reject) => {
          timer = setTimeout(
            () =>
              reject(new Error(`daemon ${this.pid} still running after ${timeoutMs} ms:\n${this.tail()}`)),
            timeoutMs,
          );
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export function httpGet(port: number, urlPath: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: urlPath, agent: false, timeout: 5000 }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${urlPath}: timeout`)));
    req.on('error', reject);
  });
}

/** Value of a sample line `name{labels} value` in Prometheus text, or undefined. */
export function metricValue(text: string, sample: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line === undefined ? undefined : Number(line.slice(sample.length + 1));
}

/**
 * `run` serves HTTPS on :10258 by default; suites that do not test it turn it off, so that
 * replicas run side by side and need no review rights (test/integration/secure-serving covers it).
 */
export function withoutSecurePort(args: readonly string[]): readonly string[] {
  const runs = args[0] === 'run' || args[0]?.startsWith('-') === true;
  if (!runs || args.some((a) => a.startsWith('--secure-port'))) return args;
  return [...args, '--secure-port=0'];
}

/** Runs the executable to completion (for --help, bad flags, plan). */
export function runToExit(
  args: readonly string[],
  timeoutMs = 60_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(pinnedNode(), [BIN, ...withoutSecurePort(args)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: childEnv(),
      cwd: ROOT,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${args.join(' ')}: no exit within ${timeoutMs} ms\n${stderr}`));
    }, timeoutMs);
    // 'close', not 'exit': at 'exit' the pipes may still hold output not yet read.
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}
