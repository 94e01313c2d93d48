// The measurements of scripts/informer-memory.ts, each in a fresh child process so that its RSS
// is that of a controller process and nothing else: `measure` is what a child runs (informer,
// controller or raw); runChild and runCompiledChild start one and read its line of JSON.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { missingNodeFlags } from '../bin/node-flags.js';
import type { KubeClient } from '../src/kube/kube-client.ts';
import type { NodeInformer } from '../src/kube/node-informer.ts';

interface Sample {
  rssMiB: number;
  heapUsedMiB: number;
  heapTotalMiB: number;
  externalMiB: number;
}

function mib(bytes: number): number {
  return Math.round((bytes / 1048576) * 10) / 10;
}

/**
 * Peak resident bytes of this process. VmHWM, not resourceUsage().maxRSS:
 * Linux carries ru_maxrss over exec, so a child would report its parent's.
 */
function peakRssBytes(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) * 1024 : process.resourceUsage().maxRSS * 1024;
}

function sample(): Sample {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  return {
    rssMiB: mib(m.rss),
    heapUsedMiB: mib(m.heapUsed),
    heapTotalMiB: mib(m.heapTotal),
    externalMiB: mib(m.external),
  };
}

type Measurement = Record<string, unknown>;

/** One measurement in this process (`--child MODE`): informer | controller | raw; prints its JSON. */
export async function measure(mode: string, kubeconfig: string): Promise<void> {
  const started = sample();
  const { createKubeClient } = await import('../src/kube/kubeconfig.ts');
  const { NodeInformer } = await import('../src/kube/node-informer.ts');
  const client = createKubeClient({ kubeconfig, env: {} });
  const out: Measurement = {
    mode,
    flags: process.execArgv.filter((a) => a.startsWith('--max')),
    started,
  };
  if (mode === 'raw') await measureRaw(client, out);
  else await measureInformer(client, NodeInformer, mode, out);
  out['peakRssMiB'] = mib(peakRssBytes());
  client.close();
  process.stdout.write(JSON.stringify(out) + '\n');
}

/** The nodes held as parsed, untransformed JSON: what an informer without the transform keeps. */
async function measureRaw(client: KubeClient, out: Measurement): Promise<void> {
  out['imported'] = sample();
  const raw: unknown[] = [];
  let cont: string | undefined;
  do {
    const q = `limit=500${cont === undefined ? '' : `&continue=${encodeURIComponent(cont)}`}`;
    const page = (await client.requestJson(`/api/v1/nodes?${q}`)) as {
      items: unknown[];
      metadata: { continue?: string };
    };
    raw.push(...page.items);
    cont = page.metadata.continue || undefined;
  } while (cont !== undefined);
  out['held'] = sample();
  out['nodes'] = raw.length;
}

/** The controller's modules, all imported before the `imported` sample so that it counts them. */
async function controllerModules() {
  const { Registry } = await import('prom-client');
  const { RouteControllerMetrics } = await import('../src/controller/metrics.ts');
  const { RouteController } = await import('../src/controller/route-controller.ts');
  const { MemoryRoutes } = await import('../src/cloud/memory/memory-routes.ts');
  const { KubeNodeStatusWriter } = await import('../src/kube/node-status-writer.ts');
  const { KubeEventRecorder } = await import('../src/kube/event-recorder.ts');
  return {
    Registry,
    RouteControllerMetrics,
    RouteController,
    MemoryRoutes,
    KubeNodeStatusWriter,
    KubeEventRecorder,
  };
}

type ControllerModules = Awaited<ReturnType<typeof controllerModules>>;

/** The informer synced; for `controller` also after the first reconcile. */
async function measureInformer(
  client: KubeClient,
  Informer: typeof NodeInformer,
  mode: string,
  out: Measurement,
): Promise<void> {
  const mods = await controllerModules();
  const metrics = new mods.RouteControllerMetrics(new mods.Registry());
  out['imported'] = sample();
  const informer = new Informer({ client, metrics, pageSize: Number(process.env['PAGE'] ?? 500) });
  const t0 = Date.now();
  informer.start();
  await informer.waitForSync(AbortSignal.timeout(600_000));
  out['syncSeconds'] = Math.round((Date.now() - t0) / 100) / 10;
  out['nodes'] = informer.list().length;
  out['synced'] = sample();
  if (mode === 'controller') await firstReconcile({ client, informer, metrics, mods }, out);
  await informer.stop();
}

/** RouteController (watch mode) on an in-memory cloud, until its first reconcile created the routes. */
async function firstReconcile(
  on: {
    client: KubeClient;
    informer: NodeInformer;
    metrics: InstanceType<ControllerModules['RouteControllerMetrics']>;
    mods: ControllerModules;
  },
  out: Measurement,
): Promise<void> {
  const { client, informer, metrics, mods } = on;
  const cloud = new mods.MemoryRoutes();
  const stop = new AbortController();
  let done!: () => void;
  const first = new Promise<void>((r) => (done = r));
  const rc = new mods.RouteController({
    routes: cloud,
    nodes: informer,
    statusWriter: new mods.KubeNodeStatusWriter(client),
    recorder: new mods.KubeEventRecorder({ client }),
    metrics,
    clusterCIDRs: ['10.0.0.0/8'],
    watchBasedReconciliation: true,
    onReconcile: () => done(),
  });
  const running = rc.run(stop.signal);
  await first;
  out['routes'] = cloud.snapshot().length;
  out['reconciled'] = sample();
  stop.abort();
  await running;
}

/** How children run: V8's defaults or the daemon's flags (bin/node-flags.js), and a semi-space cap. */
export interface ChildOptions {
  readonly v8Defaults: boolean;
  /** --max-semi-space-size=MB instead of the daemon's flags. */
  readonly semi?: string;
}

function v8Flags(opts: ChildOptions): string[] {
  if (opts.semi !== undefined) return [`--max-semi-space-size=${opts.semi}`];
  return opts.v8Defaults ? [] : [...missingNodeFlags([], process.env['NODE_OPTIONS'])];
}

/** `script --child MODE` in a fresh process (`script`: scripts/informer-memory.ts); its JSON. */
export function runChild(
  script: string,
  mode: string,
  kubeconfig: string,
  opts: ChildOptions,
): Promise<Measurement> {
  const args = ['--expose-gc', ...v8Flags(opts), script, '--child', mode, '--kubeconfig', kubeconfig];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { maxBuffer: 1 << 20, timeout: 900_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${mode} child failed: ${err.message}\n${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as Measurement);
    });
  });
}

/** The informer measurement as plain JavaScript on the compiled modules in `dist`. */
const COMPILED_CHILD = `
const [dist, kubeconfig] = process.argv.slice(1);
const mib = (b) => Math.round((b / 1048576) * 10) / 10;
const { readFileSync } = await import('node:fs');
// VmHWM: Linux carries ru_maxrss over exec, so maxRSS would be the parent's.
const peakRss = () => Number(/VmHWM:\\s+(\\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
const sample = () => {
  globalThis.gc(); globalThis.gc();
  const m = process.memoryUsage();
  return { rssMiB: mib(m.rss), heapUsedMiB: mib(m.heapUsed), heapTotalMiB: mib(m.heapTotal), externalMiB: mib(m.external) };
};
const started = sample();
const { createKubeClient } = await import(dist + '/kube/kubeconfig.js');
const { NodeInformer } = await import(dist + '/kube/node-informer.js');
const { RouteControllerMetrics } = await import(dist + '/controller/metrics.js');
const { Registry } = await import('prom-client');
const client = createKubeClient({ kubeconfig, env: {} });
const metrics = new RouteControllerMetrics(new Registry());
const imported = sample();
const informer = new NodeInformer({ client, metrics });
const t0 = Date.now();
informer.start();
await informer.waitForSync(AbortSignal.timeout(600000));
const syncSeconds = Math.round((Date.now() - t0) / 100) / 10;
const synced = sample();
const nodes = informer.list().length;
await informer.stop();
client.close();
console.log(JSON.stringify({ mode: 'informer (compiled JS)', flags: process.execArgv.filter((a) => a.startsWith('--max')), started, imported, syncSeconds, nodes, synced,
  peakRssMiB: mib(peakRss()) }));
`;

/** The informer measured from the compiled JavaScript (tsc output, as an installed package runs it). */
export function runCompiledChild(kubeconfig: string, opts: ChildOptions): Promise<Measurement> {
  const root = path.resolve(import.meta.dirname, '..');
  // Inside node_modules so that the compiled modules resolve the repository's dependencies.
  const dist = path.join(root, 'node_modules', '.cache', 'cloud-route-controller-memory-dist');
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const build = ['-p', path.join(root, 'tsconfig.build.json'), '--outDir', dist, '--declaration', 'false'];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [tsc, ...build, '--sourceMap', 'false'], { timeout: 300_000 }, (err, out) => {
      if (err) return reject(new Error(`tsc failed: ${err.message}\n${out}`));
      const args = [
        '--expose-gc',
        ...v8Flags(opts),
        '--input-type=module',
        '-e',
        COMPILED_CHILD,
        pathToFileURL(dist).href,
        kubeconfig,
      ];
      execFile(process.execPath, args, { maxBuffer: 1 << 20, timeout: 900_000 }, (e2, stdout, stderr) => {
        if (e2) reject(new Error(`compiled child failed: ${e2.message}\n${stderr}`));
        else resolve(JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as Measurement);
      });
    });
  });
}
