// One shipped daemon (`bin/cloud-route-controller.js run`, as installed from
// the packed tarball) as a bench child process: readiness from /readyz, the
// reconcile count from /metrics, resident memory and CPU time from /proc.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

function get(port: number, urlPath: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: urlPath, timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', () => resolve({ status: 0, body: '' }));
    req.on('timeout', () => req.destroy());
  });
}

/** Resident memory (MB) of a live process, from /proc (Linux). */
export function rssMB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** User + system CPU time (ms) of a live process, from /proc (Linux; clock ticks of 10 ms). */
export function cpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

export class Daemon {
  readonly pid: number;
  private readonly child: ChildProcess;
  private readonly exited: Promise<number | null>;
  private readonly metricsPort: number;
  private readonly healthPort: number;

  private constructor(child: ChildProcess, metricsPort: number, healthPort: number) {
    this.child = child;
    this.pid = child.pid ?? -1;
    this.metricsPort = metricsPort;
    this.healthPort = healthPort;
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  }

  /** Starts `node bin run <args>` with both servers on free loopback ports; stderr goes to `logFile`. */
  static async start(
    bin: string,
    args: readonly string[],
    logFile: string,
    env: NodeJS.ProcessEnv = process.env,
  ): Promise<Daemon> {
    const metricsPort = await freePort();
    const healthPort = await freePort();
    const log = fs.openSync(logFile, 'w');
    // No Node flags here: the executable adds its own V8 flags (execve, same pid).
    const child = spawn(
      process.execPath,
      [
        bin,
        'run',
        ...args,
        `--metrics-bind-address=127.0.0.1:${metricsPort}`,
        `--health-probe-bind-address=127.0.0.1:${healthPort}`,
        '--log-format=json',
      ],
      { stdio: ['ignore', log, log], env },
    );
    fs.closeSync(log);
    return new Daemon(child, metricsPort, healthPort);
  }

  private alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Polls until `check` holds; throws after `timeoutMs` or when the daemon exits. */
  private async until(
    what: string,
    check: () => Promise<boolean>,
    timeoutMs: number,
    pollMs = 250,
  ): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (Date.now() < end) {
      if (!this.alive()) throw new Error(`daemon ${this.pid} exited (${this.child.exitCode}) before ${what}`);
      if (await check()) return;
      await sleep(pollMs);
    }
    throw new Error(`daemon ${this.pid}: no ${what} within ${timeoutMs} ms`);
  }

  /** /readyz = 200: the node cache has synced (R64); polled every `pollMs`. */
  async synced(timeoutMs: number, pollMs?: number): Promise<void> {
    await this.until(
      'readiness',
      async () => (await get(this.healthPort, '/readyz')).status === 200,
      timeoutMs,
      pollMs,
    );
  }

  /** Finished reconciles (route_controller_route_sync_total, all labels). */
  async reconciles(): Promise<number> {
    const { body } = await get(this.metricsPort, '/metrics');
    let n = 0;
    for (const line of body.split('\n'))
      if (line.startsWith('route_controller_route_sync_total{'))
        n += Number(line.slice(line.lastIndexOf(' ') + 1));
    return n;
  }

  async reconciled(count: number, timeoutMs: number): Promise<void> {
    await this.until(`${count} reconcile(s)`, async () => (await this.reconciles()) >= count, timeoutMs);
  }

  rssMB(): number {
    this.mustBeAlive('its memory was read');
    return rssMB(this.pid);
  }

  cpuMs(): number {
    this.mustBeAlive('its CPU time was read');
    return cpuMs(this.pid);
  }

  private mustBeAlive(what: string): void {
    if (!this.alive()) throw new Error(`daemon ${this.pid} exited (${this.child.exitCode}) before ${what}`);
  }

  /** SIGTERM (the daemon drains and releases its Lease); SIGKILL after 30 s. */
  async stop(): Promise<number | null> {
    if (this.alive()) this.child.kill('SIGTERM');
    const t = setTimeout(() => this.child.kill('SIGKILL'), 30_000);
    const code = await this.exited;
    clearTimeout(t);
    return code;
  }
}
