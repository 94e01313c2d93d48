// Soak run (not in CI): `npm run soak -- --minutes N [--nodes 200] [--seed S] [--out file.json]`.
// A real kube-apiserver + etcd, the RouteController in-process in watch mode
// as a user bound to deploy/base/rbac.yaml, the in-memory cloud with seeded foreign
// routes. In 30-second cycles: ~22 s of node churn (a change every 1–3 s) with
// a random cloud fault episode in its first 15 s, then a quiescence window in
// which the route set and every NetworkUnavailable must converge exactly. The
// full call log goes through the invariant checker all along. Reports memory
// (RSS/heap at start, every 5 min, end) and event-loop delay (p99/max).
import * as fs from 'node:fs';
import * as os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startControlPlane } from '../support/controlplane.ts';
import { CLUSTER_CIDRS, setupControllerUser } from '../integration/kube-helpers.ts';
import { CallLogChecker, checkEndState, type RouteEntry } from '../faults/invariants.ts';
import { AuditedMemoryRoutes, TrackedAdmin } from '../faults/support.ts';
import { RingLogger, startFaultController } from '../faults/controller.ts';
import { Churn, Faults } from './churn.ts';
import { parseCommandLine, usageError } from '../../src/cli/script-args.ts';

const USAGE = `Usage: npm run soak [-- flags]

Soak run: a real kube-apiserver and etcd, the controller in watch mode, node churn
and cloud faults in 30-second cycles; checks convergence and the call log's
invariants, reports memory and event-loop delay. Needs npm run testenv:build.

Flags:
  --minutes N      how long (default 30)
  --nodes N        nodes to churn, 1..230 (default 200)
  --seed S         the random seed (default $TEST_SEED or 20261203); printed, so a run can be replayed
  --out FILE       the JSON result (default /tmp/soak-result.json)
  -h, --help       this help
`;

const { values } = parseCommandLine(USAGE, {
  options: {
    minutes: { type: 'string', default: '30' },
    nodes: { type: 'string', default: '200' },
    seed: { type: 'string', default: process.env['TEST_SEED'] ?? '20261203' },
    out: { type: 'string', default: '/tmp/soak-result.json' },
  },
});
const minutes = Number(values.minutes);
const nodeTarget = Number(values.nodes);
const seed = Number(values.seed);
if (!(minutes > 0) || !(nodeTarget > 0 && nodeTarget <= 230))
  usageError('--minutes must be > 0 and --nodes in 1..230');
if (!Number.isFinite(seed)) usageError(`--seed ${values.seed}: not a number`);

/** mulberry32: a seeded run can be replayed. */
function prng(a: number): () => number {
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = prng(seed);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const log = (msg: string): void => console.log(`[soak ${new Date().toISOString()}] ${msg}`);
const gc = (globalThis as { gc?: () => void }).gc;

interface MemSample {
  readonly atMin: number;
  readonly rssMB: number;
  readonly heapUsedMB: number;
  readonly loopP99ms: number;
  readonly loopMaxms: number;
}

const MB = (b: number): number => Math.round((b / 2 ** 20) * 10) / 10;
// The histogram measures whole sampling intervals: report the delay beyond the interval.
const RESOLUTION_MS = 10;
const lag = (ns: number): number => Math.max(0, Math.round((ns / 1e6 - RESOLUTION_MS) * 10) / 10);

function memSample(atMin: number, h: ReturnType<typeof monitorEventLoopDelay>): MemSample {
  gc?.();
  const m = process.memoryUsage();
  const s = {
    atMin: Math.round(atMin * 10) / 10,
    rssMB: MB(m.rss),
    heapUsedMB: MB(m.heapUsed),
    loopP99ms: lag(h.percentile(99)),
    loopMaxms: lag(h.max),
  };
  h.reset();
  return s;
}

// Outside the cluster CIDRs or unparsable: must survive untouched. The stale
// managed route to a node that never existed must go.
const FOREIGN: RouteEntry[] = [
  { destinationCIDR: '10.0.0.0/16', targetNode: 'nat-gw' },
  { destinationCIDR: '0.0.0.0/0', targetNode: 'igw' },
  { destinationCIDR: '192.168.7.0/24', targetNode: '' },
  { destinationCIDR: 'fd00:99::/64', targetNode: 'legacy' },
  { destinationCIDR: 'not-a-cidr', targetNode: 'x' },
];
const STALE: RouteEntry = { destinationCIDR: '10.244.251.0/24', targetNode: 'ghost' };

async function main(): Promise<number> {
  const t0 = Date.now();
  log(`seed ${seed}, ${minutes} min, ${nodeTarget} nodes; starting the control plane`);
  const cp = await startControlPlane();
  const violations: string[] = [];
  try {
    const admin = new TrackedAdmin(cp.adminKubeconfig);
    const kubeconfig = await setupControllerUser(cp);
    const cloud = new AuditedMemoryRoutes({ latencyMs: 5, reportNodeAddresses: true, random });
    for (const r of [...FOREIGN, STALE]) cloud.putRoute({ ...r, name: `seed-${r.destinationCIDR}` });
    const checker = new CallLogChecker({
      clusterCIDRs: CLUSTER_CIDRS,
      history: admin.history,
      graceMs: 5_000,
      initialRoutes: [...FOREIGN, STALE],
    });
    const outcomes: Record<string, number> = {};
    const rc = startFaultController({
      kubeconfig,
      watch: true,
      cloud,
      logger: new RingLogger(2_000, 2),
      controller: {
        minReconcileIntervalMs: 1_000,
        routeResyncPeriodMs: 60_000,
        cloudCallTimeoutMs: 2_000,
        onReconcile: (r) => {
          outcomes[r.outcome] = (outcomes[r.outcome] ?? 0) + 1;
        },
      },
    });
    const churn = new Churn(admin, random, nodeTarget);
    const faults = new Faults(cloud, random);
    let lastViolations = 0;
    const audit = (): void => {
      checker.feed(cloud.drain());
      if (checker.violations.length > lastViolations) {
        for (const v of checker.violations.slice(lastViolations)) log(`VIOLATION ${v}`);
        lastViolations = checker.violations.length;
      }
    };
    /** Waits for the exact end state; returns ms since `since` (the last change), -1 if it never came. */
    const converge = async (what: string, timeoutMs: number, since = Date.now()): Promise<number> => {
      const start = Date.now();
      let diff: string[] = [];
      while (Date.now() - start < timeoutMs) {
        audit();
        diff = checkEndState(cloud.entries(), await admin.nodes(), {
          clusterCIDRs: CLUSTER_CIDRS,
          keep: FOREIGN,
          checkAddresses: true,
        });
        if (diff.length === 0) return Date.now() - since;
        await sleep(500);
      }
      const v = `${what}: not converged after ${timeoutMs} ms: ${diff.slice(0, 10).join('; ')}`;
      violations.push(v);
      log(`VIOLATION ${v}\n${rc.logger.tail(30)}`);
      return -1;
    };

    await churn.populate();
    const initial = await converge('initial sync', 180_000);
    log(
      `${churn.nodes} nodes converged ${initial} ms after the last create (${Math.round((Date.now() - t0) / 1000)} s)`,
    );

    const loop = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    const loopAll = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    loop.enable();
    loopAll.enable();
    const start = Date.now();
    const samples: MemSample[] = [memSample(0, loop)];
    let nextSample = start + 5 * 60_000;
    const end = start + minutes * 60_000;
    let cycles = 0;
    let maxConverge = 0;
    const convergeTimes: number[] = [];
    while (Date.now() < end) {
      cycles++;
      const cycleStart = Date.now();
      const fault = faults.start();
      let faultOn = true;
      while (Date.now() - cycleStart < 22_000) {
        if (faultOn && Date.now() - cycleStart >= 15_000) {
          faults.clear();
          faultOn = false;
        }
        await churn.step();
        audit();
        await sleep(1_000 + random() * 2_000);
      }
      faults.clear();
      const took = await converge(`cycle ${cycles} (${fault})`, 120_000, churn.lastChangeAt);
      if (took >= 0) {
        convergeTimes.push(took);
        maxConverge = Math.max(maxConverge, took);
      }
      log(
        `cycle ${cycles}: fault ${fault}, ${churn.nodes} nodes, ${cloud.snapshot().length} routes, ` +
          `converged by ${took} ms after the last change; calls ${JSON.stringify(checker.counts)}`,
      );
      if (Date.now() >= nextSample) {
        const s = memSample((Date.now() - start) / 60_000, loop);
        samples.push(s);
        log(`memory ${JSON.stringify(s)}`);
        nextSample += 5 * 60_000;
      }
    }
    samples.push(memSample((Date.now() - start) / 60_000, loop));
    await rc.stop();
    audit();
    violations.push(...checker.finish());
    const changes = Object.values(churn.applied).reduce((a, b) => a + b, 0);
    const injected = checker.counts.failed;
    const summary = {
      seed,
      minutes: Math.round(((Date.now() - start) / 60_000) * 10) / 10,
      nodes: { target: nodeTarget, end: churn.nodes },
      cycles,
      changes: { total: changes, ...churn.applied, apiErrors: churn.apiErrors },
      faultEpisodes: faults.episodes,
      failedCloudCalls: injected,
      cloudCalls: checker.counts,
      reconciles: outcomes,
      convergeMs: {
        max: maxConverge,
        p50: convergeTimes.sort((a, b) => a - b)[Math.floor(convergeTimes.length / 2)] ?? -1,
      },
      violations,
      memory: samples,
      eventLoopDelay: {
        p99ms: lag(loopAll.percentile(99)),
        maxms: lag(loopAll.max),
        meanms: lag(loopAll.mean),
      },
      controllerLog: rc.logger.counts,
      machine: {
        cpus: `${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}`,
        memoryGB: Math.round(os.totalmem() / 2 ** 30),
        node: process.version,
        kubeApiserver: cp.versions.kubeApiserver,
        etcd: cp.versions.etcd,
      },
    };
    fs.writeFileSync(values.out, `${JSON.stringify(summary, null, 2)}\n`);
    log(`summary (also in ${values.out}):\n${JSON.stringify(summary, null, 2)}`);
    return violations.length === 0 ? 0 : 1;
  } finally {
    await cp.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(2);
  },
);
