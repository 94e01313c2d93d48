// Child processes of the side-by-side runs: this project's controller
// (bench/peer/ts-route.ts on the pinned Node, with the daemon's V8 flags) and the upstream one
// (bench/upstream, built by scripts/bench-build-upstream.sh). Both take the
// same flags and print the same JSON lines.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as readline from 'node:readline';
import { missingNodeFlags } from '../../bin/node-flags.js';

export type PeerKind = 'ts' | 'go';

export interface Variant {
  /** e.g. `ts-periodic`, `go-watch`. */
  readonly id: string;
  readonly kind: PeerKind;
  readonly watch: boolean;
  /** TS only: --route-resync (safety resync, default 1h; 0 disables). */
  readonly routeResync?: string;
  readonly label: string;
  /** TS only: run this compiled JavaScript instead of bench/peer/ts-route.ts. */
  readonly entry?: string;
  /** TS only: flags that turn defaults off (they win over PeerOptions). */
  readonly tsFlags?: readonly string[];
}

export const VARIANTS: readonly Variant[] = [
  { id: 'ts-periodic', kind: 'ts', watch: false, label: 'TS periodic' },
  { id: 'ts-watch', kind: 'ts', watch: true, label: 'TS watch (defaults)' },
  {
    id: 'ts-watch-legacy',
    kind: 'ts',
    watch: true,
    label: 'TS watch, no cache, unpaced',
    tsFlags: ['--route-cache=false', '--cloud-write-qps=0'],
  },
  { id: 'go-periodic', kind: 'go', watch: false, label: 'upstream gate off' },
  { id: 'go-watch', kind: 'go', watch: true, label: 'upstream gate on' },
];

/**
 * The throttle scenario's peers: the TS daemon's defaults told no limit (the library's default for a
 * provider that declares none), told twice the cloud's real limit, and explicitly unpaced, beside
 * upstream with the gate on and off. The cloud's limit comes from the scenario's config.
 */
export function throttleVariants(cfg: { writeRate: number; writeBurst: number }): Variant[] {
  return [
    {
      id: 'ts-watch-undeclared',
      kind: 'ts',
      watch: true,
      label: 'TS watch, no limit declared',
      tsFlags: ['--declared-limit=none'],
    },
    {
      id: 'ts-watch-declared-2x',
      kind: 'ts',
      watch: true,
      label: 'TS watch, 2x the limit declared',
      tsFlags: [`--declared-limit=${2 * cfg.writeRate}/${2 * cfg.writeBurst}`],
    },
    {
      id: 'ts-watch-unpaced',
      kind: 'ts',
      watch: true,
      label: 'TS watch, --cloud-write-qps=0',
      tsFlags: ['--cloud-write-qps=0'],
    },
    {
      id: 'ts-periodic-undeclared',
      kind: 'ts',
      watch: false,
      label: 'TS periodic, no limit declared',
      tsFlags: ['--declared-limit=none'],
    },
    { id: 'go-periodic', kind: 'go', watch: false, label: 'upstream gate off' },
    { id: 'go-watch', kind: 'go', watch: true, label: 'upstream gate on' },
  ];
}

export interface Sample {
  t: number;
  list: number;
  create: number;
  delete: number;
  routes: number;
  createOk: number;
  createErr: number;
  throttled: number;
  uptimeMs: number;
  cpuMs: number;
  rssKB: number;
}

export interface PeerOptions {
  readonly kubeconfig: string;
  readonly clusterCIDRs: readonly string[];
  readonly latency?: string;
  readonly writeRate?: number;
  readonly writeBurst?: number;
  /** TS only: the controller's client-side write budget (--cloud-write-qps/--cloud-write-burst). */
  readonly cloudWriteQps?: number;
  readonly cloudWriteBurst?: number;
  readonly failCreatesFor?: string;
  readonly syncPeriod?: string;
  readonly preload?: string;
  readonly reportInterval?: string;
  readonly logDir: string;
  readonly tag: string;
}

const repoRoot = path.resolve(import.meta.dirname, '..', '..');

export function upstreamBinary(): string | undefined {
  const env = process.env['UPSTREAM_ROUTE_BENCH'];
  if (env !== undefined && env !== '') return env;
  try {
    const p = execFileSync('bash', [path.join(repoRoot, 'scripts', 'bench-build-upstream.sh'), '--path'], {
      encoding: 'utf8',
    }).trim();
    return fs.existsSync(p) ? p : undefined;
  } catch {
    return undefined;
  }
}

export class Peer {
  readonly samples: Sample[] = [];
  created: Record<string, number> = {};
  readonly pid: number;
  private readonly child: ChildProcess;
  private readonly exited: Promise<number | null>;
  private readonly listeners = new Set<(s: Sample) => void>();

  constructor(child: ChildProcess) {
    this.child = child;
    this.pid = child.pid ?? -1;
    const rl = readline.createInterface({ input: child.stdout! });
    rl.on('line', (line) => {
      let v: unknown;
      try {
        v = JSON.parse(line);
      } catch {
        return;
      }
      if (typeof v !== 'object' || v === null) return;
      const o = v as Record<string, unknown>;
      if (typeof o['created'] === 'object' && o['created'] !== null) {
        this.created = o['created'] as Record<string, number>;
      } else if (typeof o['t'] === 'number') {
        const s = o as unknown as Sample;
        this.samples.push(s);
        for (const l of this.listeners) l(s);
      }
    });
    this.exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  }

  latest(): Sample | undefined {
    return this.samples[this.samples.length - 1];
  }

  /** Resolves with the first sample satisfying `pred`, or undefined after `timeoutMs`. */
  waitFor(pred: (s: Sample) => boolean, timeoutMs: number, stallMs?: number): Promise<Sample | undefined> {
    const last = this.latest();
    if (last && pred(last)) return Promise.resolve(last);
    return new Promise((resolve) => {
      let lastProgress = Date.now();
      let lastRoutes = last?.routes ?? 0;
      const done = (s: Sample | undefined): void => {
        clearTimeout(timer);
        this.listeners.delete(on);
        resolve(s);
      };
      const on = (s: Sample): void => {
        if (pred(s)) return done(s);
        if (s.routes !== lastRoutes) {
          lastRoutes = s.routes;
          lastProgress = Date.now();
        } else if (stallMs !== undefined && Date.now() - lastProgress > stallMs) {
          done(undefined);
        }
      };
      const timer = setTimeout(() => done(undefined), timeoutMs);
      this.listeners.add(on);
      void this.exited.then(() => done(undefined));
    });
  }

  /** SIGTERM, wait for the final lines; SIGKILL after 15 s. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    const t = setTimeout(() => this.child.kill('SIGKILL'), 15_000);
    await this.exited;
    clearTimeout(t);
  }
}

export function startPeer(v: Variant, o: PeerOptions): Peer {
  const common = [
    `--kubeconfig=${o.kubeconfig}`,
    `--cluster-cidr=${o.clusterCIDRs.join(',')}`,
    '--cluster-name=kubernetes',
    '--resync=12h',
    `--latency=${o.latency ?? '0'}`,
    `--write-rate=${o.writeRate ?? 0}`,
    `--write-burst=${o.writeBurst ?? 0}`,
    `--fail-creates-for=${o.failCreatesFor ?? '0'}`,
    `--sync-period=${o.syncPeriod ?? '10s'}`,
    `--report-interval=${o.reportInterval ?? '500ms'}`,
    ...(o.preload ? [`--preload=${o.preload}`] : []),
    ...(v.watch ? ['--watch'] : []),
  ];
  const log = path.join(o.logDir, `${o.tag}-${v.id}`);
  const stderr = fs.openSync(`${log}.stderr`, 'w');
  let child: ChildProcess;
  if (v.kind === 'go') {
    const bin = upstreamBinary();
    if (bin === undefined)
      throw new Error('upstream peer missing: run `bash scripts/bench-build-upstream.sh`');
    child = spawn(bin, [...common, `--klog-file=${log}.log`], { stdio: ['ignore', 'pipe', stderr] });
  } else {
    // With the V8 flags bin/cloud-route-controller.js starts the daemon with, so that
    // memory and CPU are those of the shipped program.
    child = spawn(
      process.execPath,
      [
        ...missingNodeFlags([], process.env['NODE_OPTIONS']),
        v.entry ?? path.join(repoRoot, 'bench', 'peer', 'ts-route.ts'),
        ...common,
        `--route-resync=${v.routeResync ?? '30m'}`,
        `--cloud-write-qps=${o.cloudWriteQps ?? 'auto'}`,
        `--cloud-write-burst=${o.cloudWriteBurst ?? 0}`,
        ...(v.tsFlags ?? []),
        `--log-file=${log}.log`,
      ],
      { stdio: ['ignore', 'pipe', stderr] },
    );
  }
  fs.closeSync(stderr);
  return new Peer(child);
}
