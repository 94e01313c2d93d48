// `npm run bench [-- --quick] [--reps N] [--only a,b]`: the benchmark suite
// (not part of `npm test`). Writes bench/out/results.json, bench/out/summary.md
// and one SVG chart per scenario. See docs/benchmarks.md.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBenchCluster, type BenchCluster } from './lib/apiserver.ts';
import { FULL, QUICK, type SuiteConfig } from './lib/config.ts';
import { machineInfo, versions } from './lib/machine.ts';
import { upstreamBinary, VARIANTS, type Variant } from './lib/peers.ts';
import { mergeResults, SCENARIO_FIELDS, type Results } from './lib/results.ts';
import { spread } from './lib/stats.ts';
import { missingNodeFlags } from '../bin/node-flags.js';
import { compileTsPeer } from './lib/build-ts.ts';
import { writeReport } from './report.ts';
import { processSession } from './scenarios/process.ts';
import {
  burstSession,
  failureSession,
  idleSession,
  routedCluster,
  type BurstRun,
} from './scenarios/realtime.ts';
import { throttlePeers, throttleScenario } from './scenarios/throttle.ts';
import { profileReconcile, type CostRow } from './scenarios/reconcile-cost.ts';
import type { EventCostRow } from './scenarios/event-cost.ts';
import { settleSession } from './scenarios/settle.ts';
import { shippedScenario } from './scenarios/shipped-run.ts';
import { burstVirtual, idleHourVirtual } from './scenarios/virtual.ts';
import { churnHourVirtual } from './scenarios/churn.ts';
import { churnRealSession } from './scenarios/churn-real.ts';
import { ipamSession, nodeAgentsMissing } from './scenarios/ipam.ts';
import { scaleSession } from './scenarios/scale.ts';
import { testenvBinaries } from '../test/support/controlplane.ts';
import { parseCommandLine, usageError } from '../src/cli/script-args.ts';

const SCENARIOS = Object.keys(SCENARIO_FIELDS) as Scenario[];
type Scenario = keyof typeof SCENARIO_FIELDS;

const USAGE = `Usage: npm run bench [-- flags]

The benchmark suite: this controller against upstream's Go route controller on real
kube-apiservers, in virtual time, and the shipped package. Writes results.json,
summary.md and one SVG chart per scenario (docs/benchmarks.md).

Flags:
  --quick          every scenario, reduced (under 5 minutes)
  --reps N         repetitions of the timed real-apiserver runs (full suite: 3)
  --only a,b       only these scenarios: ${SCENARIOS.join(', ')}
  --out DIR        where to write (default bench/out)
  --merge FILE     re-measure the --only scenarios into an earlier results.json
  -h, --help       this help
`;

const { values: args } = parseCommandLine(USAGE, {
  options: {
    quick: { type: 'boolean', default: false },
    reps: { type: 'string' },
    only: { type: 'string' },
    out: { type: 'string', default: path.join(import.meta.dirname, 'out') },
    // Re-measure some scenarios (--only) into an earlier results.json; the summary lists the merge.
    merge: { type: 'string' },
  },
});

if (args.reps !== undefined && !(Number.isInteger(Number(args.reps)) && Number(args.reps) >= 1))
  usageError(`--reps ${args.reps}: not a positive integer`);
const cfg: SuiteConfig = {
  ...(args.quick ? QUICK : FULL),
  ...(args.reps ? { reps: Number(args.reps) } : {}),
};
const only = new Set((args.only ?? SCENARIOS.join(',')).split(',') as Scenario[]);
for (const s of only) {
  if (!(s in SCENARIO_FIELDS)) {
    usageError(`unknown scenario ${s}; known: ${SCENARIOS.join(', ')}`);
  }
}
const mergeInto: Results | undefined =
  args.merge === undefined ? undefined : (JSON.parse(fs.readFileSync(args.merge, 'utf8')) as Results);
const outDir = path.resolve(args.out);
const logDir = path.join(outDir, 'logs');
fs.mkdirSync(logDir, { recursive: true });

const t0 = Date.now();
const log = (msg: string): void => {
  const s = ((Date.now() - t0) / 1000).toFixed(0).padStart(5);
  process.stderr.write(`[bench ${s}s] ${msg}\n`);
};

const results: Results = {
  meta: {
    suite: cfg.name,
    startedAt: new Date().toISOString(),
    machine: machineInfo(),
    versions: versions(),
    config: cfg,
    skipped: {},
    variants: Object.fromEntries(VARIANTS.map((v) => [v.id, v.label])),
    tsNodeFlags: [...missingNodeFlags([], process.env['NODE_OPTIONS'])],
  },
  idleVirtual: [],
  burstVirtual: [],
  churnVirtual: [],
  idleReal: [],
  burst: [],
  failure: [],
  settle: [],
  reconcileCost: [],
  profile: undefined,
  memory: [],
  processCost: [],
  informerMemory: undefined,
  ipam: [],
};

// The machine is shared: the 1-minute load average during the run says how much others ran meanwhile.
const loadSamples: number[] = [];
const loadTimer = setInterval(() => loadSamples.push(os.loadavg()[0]!), 30_000);
loadTimer.unref();

function save(): void {
  const s = spread(loadSamples);
  if (s) results.meta.loadAvg1m = { median: s.median, max: s.max, samples: s.n };
  fs.writeFileSync(path.join(outDir, 'results.json'), JSON.stringify(results, null, 1));
}

async function virtualScenarios(): Promise<void> {
  if (only.has('idle-virtual')) {
    for (const mode of ['periodic', 'watch-legacy', 'watch', 'watch-r0'] as const) {
      log(`idle hour, virtual time: ${mode}`);
      results.idleVirtual.push(await idleHourVirtual(mode, cfg.idleVirtual));
      save();
    }
  }
  if (only.has('burst-virtual')) {
    for (const mode of ['periodic', 'watch-legacy', 'watch'] as const) {
      log(`burst, virtual time: ${mode}`);
      results.burstVirtual.push(await burstVirtual(mode, cfg.burstVirtual));
    }
    save();
  }
  if (only.has('churn-virtual') && cfg.churnVirtual) {
    for (const mode of ['periodic', 'watch-legacy', 'watch'] as const) {
      log(`churn hour, virtual time: ${mode}`);
      results.churnVirtual!.push(await churnHourVirtual(mode, cfg.churnVirtual));
    }
    save();
  }
  if (only.has('cost')) {
    for (const n of cfg.cost.nodes) {
      for (const change of [0, 0.01]) {
        log(`reconcile cost in process: ${n} nodes, ${change * 100}% to change`);
        results.reconcileCost.push(costChild<CostRow>('reconcile', n, change, cfg.cost.iterations));
      }
    }
    log(`CPU profile: ${cfg.cost.profileNodes} nodes`);
    results.profile = {
      nodes: cfg.cost.profileNodes,
      entries: await profileReconcile(cfg.cost.profileNodes, cfg.cost.profileIterations),
    };
    results.eventCost = [];
    for (const n of cfg.cost.eventNodes ?? []) {
      for (const incremental of [true, false]) {
        log(
          `one node event's CPU in watch mode: ${n} nodes, incremental planning ${incremental ? 'on' : 'off'}`,
        );
        results.eventCost.push(
          ...costChild<EventCostRow[]>('event', n, incremental, cfg.cost.eventSamples ?? 30),
        );
      }
    }
    save();
  }
}

/** One cost measurement in a fresh process (see bench/scenarios/cost-child.ts). */
function costChild<T>(...args: (string | number | boolean)[]): T {
  const script = path.join(import.meta.dirname, 'scenarios', 'cost-child.ts');
  const out = execFileSync(process.execPath, [...process.execArgv, script, ...args.map(String)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 16 << 20,
  });
  return JSON.parse(out) as T;
}

async function realScenarios(c: BenchCluster, variants: readonly Variant[]): Promise<void> {
  if (only.has('churn-real') && cfg.churnReal && cfg.churnVirtual) {
    const peers = variants.filter((v) => ['ts-watch', 'ts-watch-legacy', 'go-watch'].includes(v.id));
    log(
      `churn hour compressed into ${cfg.churnReal.windowMs / 1000} s, real time: ${cfg.churnReal.nodes} nodes, ${peers.map((v) => v.id).join(', ')}`,
    );
    results.churnReal = await churnRealSession(c, peers, cfg.churnVirtual, cfg.churnReal, logDir);
    save();
  }
  if (only.has('idle')) {
    log(`idle, real time: ${cfg.idle.nodes} routed nodes, all variants at once`);
    const cluster = await routedCluster(c, cfg.idle.nodes, logDir);
    results.idleReal = await idleSession(c, variants, cfg.idle, cluster, logDir, 'idle');
    save();
  }
  for (let rep = 1; rep <= cfg.reps; rep++) {
    for (const v of variants) {
      if (only.has('burst')) {
        log(`burst ${rep}/${cfg.reps}: ${v.id}`);
        const r = await burstSession(c, v, cfg.burst, logDir, `burst${rep}`);
        results.burst.push(r);
        log(`  routes ${r.routes}/${cfg.burst.nodes} converged=${r.converged} in ${r.convergeS ?? '-'} s`);
        save();
      }
      if (only.has('failure')) {
        log(`failure recovery ${rep}/${cfg.reps}: ${v.id}`);
        const r = await failureSession(c, v, cfg.failure, logDir, `failure${rep}`);
        results.failure.push(r);
        log(`  recovered=${r.converged} after ${r.recoveryS ?? '-'} s`);
        save();
      }
      if (only.has('settle') && cfg.settle) {
        log(`after a converged burst ${rep}/${cfg.reps}: ${v.id}`);
        results.settle.push(await settleSession(c, v, cfg.settle, logDir, `settle${rep}`));
        save();
      }
    }
  }
  if (only.has('throttle') && cfg.throttle) {
    const peers = throttlePeers(cfg.throttle, variants);
    results.meta.variants = {
      ...results.meta.variants,
      ...Object.fromEntries(peers.map((v) => [v.id, v.label])),
    };
    results.throttle = [];
    const onRun = (r: BurstRun): void => {
      results.throttle!.push(r);
      save();
    };
    await throttleScenario(c, cfg.throttle, peers, { reps: cfg.reps, logDir, log, onRun });
  }
  if (only.has('process')) {
    log('compiling the TS peer to JavaScript (memory as shipped)');
    const compiledTs = compileTsPeer();
    if (compiledTs === undefined)
      results.meta.skipped['ts-js'] = 'tsc produced no JavaScript for bench/peer/ts-route.ts';
    const sizes = [...new Set([...cfg.process.memoryNodes, ...cfg.process.costNodes])].sort((a, b) => a - b);
    for (const n of sizes) {
      log(`process memory/CPU: ${n} dual-stack nodes`);
      const r = await processSession(
        c,
        n,
        {
          measureMs: cfg.process.measureMs,
          settleMs: cfg.process.settleMs,
          cost: cfg.process.costNodes.includes(n),
        },
        logDir,
        logDir,
        [...new Set(variants.map((v) => v.kind))],
        compiledTs,
      );
      if (cfg.process.memoryNodes.includes(n)) results.memory.push(...r.memory);
      results.processCost.push(...r.cost);
      save();
    }
  }
  if (only.has('shipped')) {
    results.shipped = await shippedScenario(c, cfg.shipped, {
      withGo: variants.some((v) => v.kind === 'go'),
      logDir,
      log,
      save: (r) => {
        results.shipped = r;
        save();
      },
    });
    save();
  }
  if (only.has('scale')) {
    if (cfg.scale === undefined)
      results.meta.skipped['scale'] = 'the 15,000-node scenario runs in the full suite only';
    else {
      results.scale = await scaleSession(c, cfg.scale, {
        withGo: variants.some((v) => v.kind === 'go'),
        logDir,
        log,
        reps: cfg.reps,
      });
      save();
    }
  }
  await c.admin.deleteAllNodes();
}

/**
 * Kubelet-like registration with node IPAM and kwok: a control plane of its own per session
 * (test/support/kwok-cluster.ts), started after the shared one stopped.
 */
async function ipamScenario(): Promise<void> {
  const c = cfg.ipam;
  if (c === undefined) {
    results.meta.skipped['ipam'] = 'registration with node IPAM and kwok runs in the full suite only';
    return;
  }
  const missing = testenvBinaries() === undefined ? 'kube-apiserver/etcd missing' : nodeAgentsMissing();
  if (missing !== undefined) {
    results.meta.skipped['ipam'] = missing;
    return;
  }
  const goBin = upstreamBinary();
  if (goBin === undefined)
    results.meta.skipped['upstream'] = 'upstream peer missing: run `bash scripts/bench-build-upstream.sh`';
  const variants = VARIANTS.filter((v) =>
    v.kind === 'ts' ? v.id === 'ts-watch' : goBin !== undefined && ['go-watch', 'go-periodic'].includes(v.id),
  );
  for (let rep = 1; rep <= cfg.reps; rep++) {
    for (const v of variants) {
      log(`registration with node IPAM and kwok ${rep}/${cfg.reps}: ${v.id}, ${c.nodes} nodes`);
      const r = await ipamSession(v, c, logDir, `ipam${rep}`);
      results.ipam!.push(r);
      log(
        `  schedulable ${r.schedulable}/${c.nodes}, last after ${r.lastSchedulableS ?? '-'} s, p50 ${r.schedulableMs.p50 ?? '-'} ms`,
      );
      save();
    }
  }
}

/** Reuses the kube team's informer memory script (own control plane), when present. */
async function informerMemoryScript(): Promise<void> {
  const script = path.resolve(import.meta.dirname, '..', 'scripts', 'informer-memory.ts');
  if (!fs.existsSync(script)) {
    results.meta.skipped['informer-memory'] = 'scripts/informer-memory.ts not present';
    return;
  }
  if (cfg.name === 'quick') {
    results.meta.skipped['informer-memory'] = 'scripts/informer-memory.ts runs in the full suite only';
    return;
  }
  const nodes = 5000;
  log(`scripts/informer-memory.ts --nodes ${nodes}`);
  try {
    const out = execFileSync(process.execPath, [script, '--nodes', String(nodes), '--json'], {
      encoding: 'utf8',
      timeout: 1_200_000,
      maxBuffer: 1 << 22,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    results.informerMemory = JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
  } catch (err) {
    results.meta.skipped['informer-memory'] =
      `scripts/informer-memory.ts failed: ${(err as Error).message.slice(0, 200)}`;
  }
  save();
}

async function main(): Promise<void> {
  log(`suite ${cfg.name}, ${cfg.reps} repetition(s), output ${outDir}`);
  await virtualScenarios();
  const wantsReal = [
    'idle',
    'burst',
    'failure',
    'settle',
    'process',
    'shipped',
    'churn-real',
    'scale',
    'throttle',
  ].some((s) => only.has(s as Scenario));
  if (wantsReal) {
    const bins = testenvBinaries();
    const goBin = upstreamBinary();
    if (bins === undefined) {
      results.meta.skipped['real-apiserver'] =
        'kube-apiserver/etcd missing: run `bash scripts/testenv.sh build`';
    } else {
      if (goBin === undefined) {
        results.meta.skipped['upstream'] =
          'upstream peer missing: run `bash scripts/bench-build-upstream.sh`';
      }
      const variants = VARIANTS.filter((v) => v.kind === 'ts' || goBin !== undefined);
      log('starting kube-apiserver + etcd');
      const c = await startBenchCluster();
      results.meta.versions.kubeApiserver = c.cp.versions.kubeApiserver;
      results.meta.versions.etcd = c.cp.versions.etcd;
      try {
        await realScenarios(c, variants);
      } finally {
        await c.stop();
      }
    }
  }
  if (only.has('ipam')) await ipamScenario();
  if (only.has('process') && testenvBinaries() !== undefined) await informerMemoryScript();
  results.meta.finishedAt = new Date().toISOString();
  results.meta.wallS = (Date.now() - t0) / 1000;
  save();
  const final = mergeInto ? mergeResults(mergeInto, results, only, cfg.reps) : results;
  if (mergeInto) fs.writeFileSync(path.join(outDir, 'results.json'), JSON.stringify(final, null, 1));
  await writeReport(final, outDir);
  log(`done in ${results.meta.wallS.toFixed(0)} s: ${path.join(outDir, 'summary.md')}`);
}

await main();
