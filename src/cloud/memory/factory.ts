// `--cloud-provider memory`: the in-memory cloud behind the daemon, for trials
// and tests. With `stateFile`, routes live in a JSON file shared by every
// process that names it (so two replicas program "one cloud"), and `callLog`
// appends one JSON line per call for audits (who wrote when).
import { appendFileSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { parseYaml } from '../../yaml/lazy.ts';
import { parseDuration } from '../../core/duration.ts';
import { PermanentError } from '../../core/errors.ts';
import type {
  CallOptions,
  CloudProvider,
  CloudProviderFactory,
  Route,
  Routes,
  RouteTableRoom,
} from '../../core/types.ts';
import { MemoryRoutes, type MemoryRoutesOptions, type StoredRoute } from './memory-routes.ts';

export interface MemoryCloudConfig {
  latency?: string;
  rateLimit?: { ratePerSec: number; burst: number };
  writeRateLimit?: { ratePerSec: number; burst: number };
  quota?: number;
  reportNodeAddresses?: boolean;
  stateFile?: string;
  callLog?: string;
  /** A JSON file of routes the cloud starts with, read once (no file I/O per call, unlike stateFile). */
  initialRoutes?: string;
}

export class MemoryConfigError extends Error {
  override readonly name = 'MemoryConfigError';
}

const KEYS = new Set([
  'latency',
  'rateLimit',
  'writeRateLimit',
  'quota',
  'reportNodeAddresses',
  'stateFile',
  'callLog',
  'initialRoutes',
]);

function bucket(v: unknown, field: string): { ratePerSec: number; burst: number } | undefined {
  if (v === undefined) return undefined;
  const o = v as Record<string, unknown>;
  if (
    typeof o !== 'object' ||
    o === null ||
    typeof o['ratePerSec'] !== 'number' ||
    typeof o['burst'] !== 'number'
  ) {
    throw new MemoryConfigError(`memory cloud config: ${field} must be {ratePerSec: number, burst: number}`);
  }
  return { ratePerSec: o['ratePerSec'], burst: o['burst'] };
}

export function parseMemoryConfig(text: string): MemoryCloudConfig {
  if (text.trim() === '') return {};
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (err) {
    throw new MemoryConfigError(`memory cloud config: not YAML or JSON: ${(err as Error).message}`);
  }
  if (raw === null || raw === undefined) return {};
  if (typeof raw !== 'object' || Array.isArray(raw))
    throw new MemoryConfigError('memory cloud config: must be a mapping');
  const o = raw as Record<string, unknown>;
  for (const k of Object.keys(o))
    if (!KEYS.has(k)) throw new MemoryConfigError(`memory cloud config: unknown field "${k}"`);
  const str = (k: string): string | undefined => {
    const v = o[k];
    if (v !== undefined && typeof v !== 'string')
      throw new MemoryConfigError(`memory cloud config: ${k} must be a string`);
    return v;
  };
  const latency = str('latency');
  if (latency !== undefined) {
    try {
      parseDuration(latency);
    } catch {
      throw new MemoryConfigError(`memory cloud config: latency "${latency}" is not a duration`);
    }
  }
  if (o['quota'] !== undefined && (typeof o['quota'] !== 'number' || o['quota'] < 0)) {
    throw new MemoryConfigError('memory cloud config: quota must be a non-negative number');
  }
  if (o['reportNodeAddresses'] !== undefined && typeof o['reportNodeAddresses'] !== 'boolean') {
    throw new MemoryConfigError('memory cloud config: reportNodeAddresses must be a boolean');
  }
  return {
    latency,
    rateLimit: bucket(o['rateLimit'], 'rateLimit'),
    writeRateLimit: bucket(o['writeRateLimit'], 'writeRateLimit'),
    quota: o['quota'] as number | undefined,
    reportNodeAddresses: o['reportNodeAddresses'] as boolean | undefined,
    stateFile: str('stateFile'),
    callLog: str('callLog'),
    initialRoutes: str('initialRoutes'),
  };
}

/** Wraps MemoryRoutes so each call loads/saves the shared state file and logs to the call log. */
class FileBackedRoutes implements Routes {
  private readonly mem: MemoryRoutes;
  private readonly cfg: MemoryCloudConfig;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(mem: MemoryRoutes, cfg: MemoryCloudConfig) {
    this.mem = mem;
    this.cfg = cfg;
  }

  private serial<T>(op: string, detail: Record<string, unknown>, fn: () => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      const start = Date.now();
      this.load();
      let outcome = 'ok';
      try {
        const r = await fn();
        this.save();
        return r;
      } catch (err) {
        outcome = (err as Error).name;
        throw err;
      } finally {
        if (this.cfg.callLog) {
          const line = { op, pid: process.pid, start, end: Date.now(), outcome, ...detail };
          appendFileSync(this.cfg.callLog, `${JSON.stringify(line)}\n`);
        }
      }
    };
    const p = this.chain.then(run, run);
    this.chain = p.catch(() => {});
    return p;
  }

  private load(): void {
    const f = this.cfg.stateFile;
    if (!f || !existsSync(f)) return;
    const routes = JSON.parse(readFileSync(f, 'utf8')) as StoredRoute[];
    for (const r of this.mem.snapshot()) this.mem.removeRoute(r.destinationCIDR);
    for (const r of routes) this.mem.putRoute(r);
  }

  private save(): void {
    const f = this.cfg.stateFile;
    if (!f) return;
    writeFileSync(`${f}.tmp-${process.pid}`, JSON.stringify(this.mem.snapshot()));
    renameSync(`${f}.tmp-${process.pid}`, f);
  }

  listRoutes(clusterName: string, opts: CallOptions): Promise<Route[]> {
    return this.serial('list', {}, () => this.mem.listRoutes(clusterName, opts));
  }

  createRoute(
    clusterName: string,
    nameHint: string,
    route: Readonly<Route>,
    opts: CallOptions,
  ): Promise<Route> {
    return this.serial(
      'create',
      { destinationCIDR: route.destinationCIDR, targetNode: route.targetNode },
      () => this.mem.createRoute(clusterName, nameHint, route, opts),
    );
  }

  routeTableRoom(clusterName: string, opts: CallOptions): Promise<RouteTableRoom | undefined> {
    // The state file was loaded by the list this follows (R115); no file I/O of its own.
    return this.mem.routeTableRoom(clusterName, opts);
  }

  deleteRoute(clusterName: string, route: Readonly<Route>, opts: CallOptions): Promise<void> {
    return this.serial(
      'delete',
      { destinationCIDR: route.destinationCIDR, targetNode: route.targetNode },
      () => this.mem.deleteRoute(clusterName, route, opts),
    );
  }
}

export function buildMemoryRoutes(cfg: MemoryCloudConfig): Routes {
  const opts: MemoryRoutesOptions = {
    ...(cfg.latency ? { latencyMs: parseDuration(cfg.latency) } : {}),
    ...(cfg.rateLimit ? { rateLimit: cfg.rateLimit } : {}),
    ...(cfg.writeRateLimit ? { writeRateLimit: cfg.writeRateLimit } : {}),
    ...(cfg.quota !== undefined ? { quota: cfg.quota } : {}),
    ...(cfg.reportNodeAddresses !== undefined ? { reportNodeAddresses: cfg.reportNodeAddresses } : {}),
  };
  const mem = new MemoryRoutes(opts);
  if (cfg.initialRoutes !== undefined) for (const r of readInitialRoutes(cfg.initialRoutes)) mem.putRoute(r);
  return cfg.stateFile || cfg.callLog ? new FileBackedRoutes(mem, cfg) : mem;
}

function readInitialRoutes(file: string): StoredRoute[] {
  let routes: unknown;
  try {
    routes = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new MemoryConfigError(`memory cloud config: initialRoutes ${file}: ${(err as Error).message}`);
  }
  const ok = (r: unknown): r is StoredRoute =>
    typeof r === 'object' &&
    r !== null &&
    typeof (r as StoredRoute).destinationCIDR === 'string' &&
    typeof (r as StoredRoute).targetNode === 'string';
  if (!Array.isArray(routes) || !routes.every(ok))
    throw new MemoryConfigError(
      `memory cloud config: initialRoutes ${file} must be a JSON array of routes with destinationCIDR and targetNode`,
    );
  return routes;
}

export const memoryProviderFactory: CloudProviderFactory = (config): CloudProvider => {
  let cfg: MemoryCloudConfig;
  let routes: Routes;
  try {
    cfg = parseMemoryConfig(config);
    routes = buildMemoryRoutes(cfg);
  } catch (err) {
    throw new PermanentError((err as Error).message);
  }
  // R68: the configured write limit is the one the adaptive budget starts from.
  const writeLimit = cfg.writeRateLimit
    ? { qps: cfg.writeRateLimit.ratePerSec, burst: cfg.writeRateLimit.burst }
    : ('unlimited' as const);
  // Routes name their target node: only a re-created node (new UID) may differ.
  return { name: 'memory', routes: () => routes, writeLimit, routeTargetKeys: ['uid'] };
};
