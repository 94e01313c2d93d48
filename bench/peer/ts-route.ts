// The TypeScript side of the side-by-side benchmark: this project's
// RouteController with the real node informer, status writer and event
// recorder (src/kube) against an instrumented MemoryRoutes. Flags and stdout
// mirror bench/upstream (the Go peer) so the runner treats both alike:
//   {"t":<unix ms>,"list":n,"create":n,"delete":n,"routes":n,...}  every --report-interval and at exit
//   {"created":{"<cidr>":<unix ms>,...}}                             at exit
import * as fs from 'node:fs';
import { parseArgs } from 'node:util';
import { MemoryRoutes } from '../../src/cloud/memory/memory-routes.ts';
import { RouteController } from '../../src/controller/route-controller.ts';
import type { RouteControllerOptions } from '../../src/controller/options.ts';
import { canonicalCIDR } from '../../src/core/cidr.ts';
import { seededRandom } from '../../src/core/random.ts';
import { parseDuration } from '../../src/core/duration.ts';
import { RetryableError, ThrottledError } from '../../src/core/errors.ts';
import type { CallOptions, Route, Routes } from '../../src/core/types.ts';
import {
  createKubeClient,
  KubeEventRecorder,
  KubeNodeStatusWriter,
  NodeInformer,
} from '../../src/kube/index.ts';
import { DaemonLogger } from '../../src/log/logger.ts';

/**
 * Counts at call entry, like the Go peer's atomic counters, and keeps the
 * first successful create time per canonical CIDR for latency.
 */
class CountingRoutes implements Routes {
  readonly counts = { list: 0, create: 0, delete: 0, createOk: 0, createErr: 0, throttled: 0 };
  readonly created = new Map<string, number>();
  private readonly inner: MemoryRoutes;
  constructor(inner: MemoryRoutes) {
    this.inner = inner;
  }
  listRoutes(clusterName: string, opts: CallOptions): Promise<Route[]> {
    this.counts.list++;
    return this.inner.listRoutes(clusterName, opts);
  }
  async createRoute(
    clusterName: string,
    hint: string,
    route: Readonly<Route>,
    opts: CallOptions,
  ): Promise<Route> {
    this.counts.create++;
    let listed: Route;
    try {
      listed = await this.inner.createRoute(clusterName, hint, route, opts);
    } catch (err) {
      this.counts.createErr++;
      if (err instanceof ThrottledError) this.counts.throttled++;
      throw err;
    }
    this.counts.createOk++;
    const key = canonicalCIDR(route.destinationCIDR) ?? route.destinationCIDR;
    if (!this.created.has(key)) this.created.set(key, Date.now());
    return listed;
  }
  deleteRoute(clusterName: string, route: Readonly<Route>, opts: CallOptions): Promise<void> {
    this.counts.delete++;
    return this.inner.deleteRoute(clusterName, route, opts);
  }
}

interface PreloadRoute {
  cidr: string;
  node: string;
  hint: string;
}

const { values: f } = parseArgs({
  options: {
    kubeconfig: { type: 'string' },
    watch: { type: 'boolean', default: false },
    'cluster-cidr': { type: 'string', default: '10.0.0.0/8' },
    'cluster-name': { type: 'string', default: 'kubernetes' },
    resync: { type: 'string', default: '12h' },
    'route-resync': { type: 'string', default: '30m' },
    'sync-period': { type: 'string', default: '10s' },
    latency: { type: 'string', default: '0' },
    'write-rate': { type: 'string', default: '0' },
    'write-burst': { type: 'string', default: '0' },
    // The daemon's defaults: an adaptive budget from the cloud's limit, and the route cache.
    'cloud-write-qps': { type: 'string', default: 'auto' },
    'route-cache': { type: 'string', default: 'true' },
    seed: { type: 'string', default: process.env['BENCH_SEED'] ?? '1' },
    'cloud-write-burst': { type: 'string', default: '0' },
    // What the provider declares (R68): `cloud` its configured limit, `none` nothing (an
    // out-of-tree plug-in that does not know its cloud's), or `QPS/BURST`.
    'declared-limit': { type: 'string', default: 'cloud' },
    'fail-creates-for': { type: 'string', default: '0' },
    'report-interval': { type: 'string', default: '1s' },
    'log-file': { type: 'string', default: '' },
    preload: { type: 'string', default: '' },
    'kube-api-qps': { type: 'string', default: '20' },
    'kube-api-burst': { type: 'string', default: '30' },
  },
  strict: true,
});

if (f.kubeconfig === undefined) {
  process.stderr.write('ts-route: --kubeconfig is required\n');
  process.exit(1);
}

const start = Date.now();
const writeRate = Number(f['write-rate']);
const writeBurst = Number(f['write-burst']) || 2 * writeRate;
const clusterName = f['cluster-name'];
const memory = new MemoryRoutes({
  latencyMs: parseDuration(f.latency),
  ...(writeRate > 0 ? { writeRateLimit: { ratePerSec: writeRate, burst: writeBurst } } : {}),
});
const failFor = parseDuration(f['fail-creates-for']);
if (failFor > 0) {
  // Same message as the Go peer: a retryable 503 from the cloud.
  memory.failFraction(1, ['create'], () => new RetryableError('injected create failure (HTTP 503)'));
  setTimeout(() => memory.clearFaults(), failFor).unref();
}
if (f.preload !== '') {
  const pre = JSON.parse(fs.readFileSync(f.preload, 'utf8')) as PreloadRoute[];
  for (const r of pre) {
    const key = canonicalCIDR(r.cidr) ?? r.cidr;
    memory.putRoute({
      name: `${clusterName}-${r.hint}-${key}`,
      clusterName,
      targetNode: r.node,
      destinationCIDR: r.cidr,
    });
  }
}

const routes = new CountingRoutes(memory);

const logFd = f['log-file'] === '' ? undefined : fs.openSync(f['log-file'], 'a');
const logger = DaemonLogger.create({
  format: 'text',
  verbosity: 0,
  out: { write: (line) => (logFd === undefined ? undefined : fs.writeSync(logFd, line)) },
});
const kube = createKubeClient({
  kubeconfig: f.kubeconfig,
  qps: Number(f['kube-api-qps']),
  burst: Number(f['kube-api-burst']),
  userAgent: 'routebench-ts',
});
const informer = new NodeInformer({ client: kube, logger: logger.named('reflector') });
const recorder = new KubeEventRecorder({ client: kube, logger: logger.named('event') });
const controller = new RouteController({
  routes,
  nodes: informer,
  statusWriter: new KubeNodeStatusWriter(kube),
  recorder,
  logger: logger.named('route_controller'),
  clusterCIDRs: f['cluster-cidr'].split(',').map((s) => s.trim()),
  clusterName,
  watchBasedReconciliation: f.watch,
  routeReconciliationPeriodMs: parseDuration(f['sync-period']),
  routeResyncPeriodMs: parseDuration(f['route-resync']),
  minResyncPeriodMs: parseDuration(f.resync),
  cloudWriteQPS: f['cloud-write-qps'] === 'auto' ? 'auto' : Number(f['cloud-write-qps']),
  ...(Number(f['cloud-write-burst']) > 0 ? { cloudWriteBurst: Number(f['cloud-write-burst']) } : {}),
  // As the memory provider declares its configured limit (R68), unless told otherwise.
  ...declaredLimit(f['declared-limit']),
  routeTargetKeys: ['uid'],
  routeCache: f['route-cache'] !== 'false',
  random: seededRandom(Number(f.seed)),
});

function declaredLimit(v: string): Pick<RouteControllerOptions, 'cloudWriteLimit'> {
  if (v === 'none') return {};
  if (v === 'cloud')
    return { cloudWriteLimit: writeRate > 0 ? { qps: writeRate, burst: writeBurst } : 'unlimited' };
  const [qps, burst] = v.split('/').map(Number);
  if (!(qps! > 0) || !(burst! >= 1)) {
    process.stderr.write(`ts-route: --declared-limit must be cloud, none or QPS/BURST, got ${v}\n`);
    process.exit(2);
  }
  return { cloudWriteLimit: { qps: qps!, burst: burst! } };
}

function counters(): Record<string, number> {
  const u = process.cpuUsage();
  return {
    t: Date.now(),
    ...routes.counts,
    routes: memory.snapshot().length,
    uptimeMs: Date.now() - start,
    cpuMs: Math.round((u.user + u.system) / 1000),
    rssKB: Math.round(process.memoryUsage.rss() / 1024),
  };
}

function emit(v: unknown): void {
  fs.writeSync(1, JSON.stringify(v) + '\n');
}

const stop = new AbortController();
const interval = setInterval(() => emit(counters()), parseDuration(f['report-interval']));
emit(counters());
let stopping = false;
async function shutdown(): Promise<void> {
  if (stopping) return;
  stopping = true;
  clearInterval(interval);
  stop.abort();
  emit(counters());
  emit({ created: Object.fromEntries(routes.created) });
  await Promise.race([
    Promise.all([running, informer.stop(), recorder.close()]),
    new Promise((r) => setTimeout(r, 2000)),
  ]);
  kube.close();
  if (logFd !== undefined) fs.closeSync(logFd);
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown());
process.on('SIGINT', () => void shutdown());

informer.start();
const running = controller.run(stop.signal);
