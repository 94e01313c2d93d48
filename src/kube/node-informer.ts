// A node informer with client-go reflector semantics where the controller
// depends on them (SPEC R54–R59): paginated LIST, WATCH with bookmarks from
// the last resourceVersion, relist with an atomic cache swap on 410 Gone,
// jittered backoff that never gives up, and a watchdog for half-open watches.
// client-node's own informer stops on errors and requests no bookmarks.
import { RealClock, sleep, type Clock } from '../core/clock.ts';
import { errorMessage } from '../core/errors.ts';
import {
  nopLogger,
  statusCodeOf,
  type Logger,
  type NodeEventHandler,
  type NodeSource,
} from '../core/ports.ts';
import type { RouteControllerMetrics } from '../controller/metrics.ts';
import type { KubeClient } from './kube-client.ts';
import {
  detach,
  diffCaches,
  informerBackoffMs,
  transformNode,
  type BackoffOptions,
  type CachedNode,
} from './node-cache.ts';
import {
  kubeNodeListWatch,
  type NodeListContentType,
  type NodeListWatch,
  type RawWatchEvent,
} from './node-transport.ts';

export { transformNode, diffCaches, informerBackoffMs, type CachedNode } from './node-cache.ts';

export type RestartReason = 'watch_error' | 'gone' | 'watchdog' | 'list_error';

export interface NodeInformerOptions {
  /** Where nodes come from: a KubeClient, or any list/watch (tests). */
  readonly client?: KubeClient;
  readonly listWatch?: NodeListWatch;
  /** With `client`: the node LIST's preferred encoding (default protobuf, R110). */
  readonly listContentType?: NodeListContentType;
  readonly logger?: Logger;
  readonly metrics?: RouteControllerMetrics;
  readonly clock?: Clock;
  readonly random?: () => number;
  /** LIST page size (default 500). */
  readonly pageSize?: number;
  /** Range of the watch's timeoutSeconds, drawn uniformly per watch (default 300–600, R56). */
  readonly watchTimeoutSeconds?: { readonly min: number; readonly max: number };
  /** R57: how long past its timeoutSeconds a watch may stay open (default 60 s). */
  readonly watchdogGraceMs?: number;
  readonly backoff?: BackoffOptions;
}

/** Why the list/watch loop starts over. */
class Restart extends Error {
  override readonly name = 'InformerRestart';
  readonly reason: RestartReason;
  readonly statusCode: number | undefined;
  readonly retryAfterMs: number | undefined;
  constructor(reason: RestartReason, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.reason = reason;
    this.statusCode = statusCodeOf(cause);
    const ra =
      typeof cause === 'object' && cause !== null
        ? (cause as { retryAfterMs?: unknown }).retryAfterMs
        : undefined;
    this.retryAfterMs = typeof ra === 'number' ? ra : undefined;
  }
}

/** A watch that ends this fast without any event counts as a failure (client-go's "very short watch"). */
const MIN_WATCH_MS = 1000;

export class NodeInformer implements NodeSource {
  private readonly lw: NodeListWatch;
  private readonly logger: Logger;
  private readonly metrics: RouteControllerMetrics | undefined;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly pageSize: number;
  private readonly timeoutRange: { readonly min: number; readonly max: number };
  private readonly graceMs: number;
  private readonly backoff: BackoffOptions;
  private cache = new Map<string, CachedNode>();
  private readonly handlers = new Set<NodeEventHandler>();
  private readonly syncWaiters = new Set<() => void>();
  private synced = false;
  private rv: string | undefined;
  private failures = 0;
  private goneStreak = 0;
  private generation = 0;
  private stopper: AbortController | undefined;
  private loop: Promise<void> | undefined;

  constructor(opts: NodeInformerOptions) {
    const lw =
      opts.listWatch ?? (opts.client ? kubeNodeListWatch(opts.client, opts.listContentType) : undefined);
    if (!lw) throw new TypeError('NodeInformer needs a client or a listWatch');
    this.lw = lw;
    this.logger = opts.logger ?? nopLogger;
    this.metrics = opts.metrics;
    this.clock = opts.clock ?? new RealClock();
    this.random = opts.random ?? Math.random;
    this.pageSize = opts.pageSize ?? 500;
    this.timeoutRange = opts.watchTimeoutSeconds ?? { min: 300, max: 600 };
    this.graceMs = opts.watchdogGraceMs ?? 60_000;
    this.backoff = opts.backoff ?? {};
  }

  // ---- NodeSource -------------------------------------------------------

  get(name: string): CachedNode | undefined {
    return this.cache.get(name);
  }

  list(): readonly CachedNode[] {
    return [...this.cache.values()];
  }

  hasSynced(): boolean {
    return this.synced;
  }

  waitForSync(signal: AbortSignal): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (): void => {
        signal.removeEventListener('abort', onAbort);
        resolve(true);
      };
      const onAbort = (): void => {
        this.syncWaiters.delete(done);
        resolve(false);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.syncWaiters.add(done);
    });
  }

  addEventHandler(handler: NodeEventHandler): () => void {
    this.handlers.add(handler);
    // Like client-go: a handler added after the sync first sees the cache as adds.
    if (this.synced) for (const n of this.cache.values()) this.call('add', () => handler.onAdd(n));
    return () => {
      this.handlers.delete(handler);
    };
  }

  // ---- lifecycle ---------------------------------------------------------

  /** The resourceVersion the next watch resumes from (undefined: a relist is due). */
  get resourceVersion(): string | undefined {
    return this.rv;
  }

  get running(): boolean {
    return this.loop !== undefined;
  }

  start(): void {
    if (this.loop) return;
    const stopper = new AbortController();
    this.stopper = stopper;
    this.loop = this.run(stopper.signal);
  }

  /** Aborts the list/watch in flight and resolves once the loop has exited; the cache is kept. */
  async stop(): Promise<void> {
    this.stopper?.abort();
    await this.loop;
    this.loop = undefined;
    this.stopper = undefined;
  }

  // ---- the reflector loop ------------------------------------------------

  private async run(stop: AbortSignal): Promise<void> {
    while (!stop.aborted) {
      try {
        if (this.rv === undefined) await this.relist(stop);
        await this.watchOnce(stop);
      } catch (err) {
        if (stop.aborted) break;
        const r = err instanceof Restart ? err : new Restart('watch_error', errorMessage(err), err);
        this.metrics?.informerRestarts.inc({ reason: r.reason });
        let streak: number;
        if (r.reason === 'gone') {
          this.logger.info(`Node watch expired, relisting: ${r.message}`);
          this.rv = undefined;
          // Relist at once (client-go does), but not in a loop: a 410 again before any
          // event would otherwise hammer the apiserver with full LISTs.
          streak = ++this.goneStreak - 1;
          if (streak === 0) continue;
        } else if (r.reason === 'watchdog') {
          this.logger.warn(`Node watch presumed half-open, re-establishing: ${r.message}`);
          this.lw.resetConnections?.();
          continue;
        } else streak = ++this.failures;
        const delay = informerBackoffMs(streak, this.random, this.backoff, r.retryAfterMs);
        const what = r.reason === 'list_error' ? 'list' : 'watch';
        const line = `Failed to ${what} nodes, retrying in ${Math.round(delay)} ms: ${r.message}`;
        const fields = { statusCode: r.statusCode, failures: streak };
        if (r.statusCode === 401 || r.statusCode === 403) this.logger.error(line, fields);
        else this.logger.warn(line, fields);
        try {
          await sleep(this.clock, delay, stop);
        } catch {
          break;
        }
      }
    }
  }

  /** LIST all pages, then swap the cache in one step and emit the differences (R55, R58). */
  private async relist(stop: AbortSignal): Promise<void> {
    const next = new Map<string, CachedNode>();
    let cont: string | undefined;
    let limit = this.pageSize;
    let expired = 0;
    let rv = '';
    for (;;) {
      let page;
      try {
        // The first list, like client-go's reflector, asks for resourceVersion "0": the apiserver
        // answers from its watch cache instead of paging through etcd (R108). Later relists read
        // from etcd: they follow a 410 or a broken watch, where the cache may be what lags.
        const fromCache = !this.synced && cont === undefined && limit > 0;
        page = await this.lw.list(
          {
            limit,
            ...(cont === undefined ? {} : { continue: cont }),
            ...(fromCache ? { resourceVersion: '0' as const } : {}),
          },
          stop,
          (raw) => {
            const n = transformNode(raw);
            if (n) next.set(n.metadata!.name!, n);
          },
        );
      } catch (err) {
        if (stop.aborted) throw err;
        if (cont !== undefined && statusCodeOf(err) === 410) {
          // The continue token outlived etcd compaction: the earlier pages belong to a
          // snapshot that is gone, so start over; the second time, like client-go's
          // pager, list everything in one response.
          this.logger.info(`Node list continue token expired, restarting the list: ${errorMessage(err)}`);
          next.clear();
          cont = undefined;
          if (++expired >= 2) limit = 0;
          continue;
        }
        throw new Restart('list_error', errorMessage(err), err);
      }
      rv = page.resourceVersion;
      if (page.continue === undefined) break;
      cont = page.continue;
    }
    const old = this.cache;
    this.cache = next;
    this.rv = rv;
    const delta = diffCaches(old, next);
    for (const n of delta.deletes) this.emit('delete', (h) => h.onDelete(n, true));
    for (const n of delta.adds) this.emit('add', (h) => h.onAdd(n));
    for (const u of delta.updates) this.emit('update', (h) => h.onUpdate(u.oldNode, u.newNode));
    this.logger.v(2).info(`Listed ${next.size} nodes at resourceVersion ${rv}`, {
      added: delta.adds.length,
      updated: delta.updates.length,
      deleted: delta.deletes.length,
    });
    if (!this.synced) {
      this.synced = true;
      this.logger.info(`Node cache synced with ${next.size} nodes`);
      for (const w of [...this.syncWaiters]) w();
      this.syncWaiters.clear();
    }
  }

  /** One WATCH from this.rv; returns when the server closes it cleanly, throws Restart otherwise. */
  private async watchOnce(stop: AbortSignal): Promise<void> {
    // stop() may have run while the relist was finishing: an abort listener added now would never fire.
    if (stop.aborted) return;
    const gen = ++this.generation;
    const attempt = new AbortController();
    const onStop = (): void => attempt.abort(stop.reason);
    stop.addEventListener('abort', onStop, { once: true });
    let failure: Restart | undefined;
    const fail = (r: Restart): void => {
      failure ??= r;
      attempt.abort(r);
    };
    const { min, max } = this.timeoutRange;
    const timeoutSeconds = Math.floor(min + this.random() * (max - min + 1));
    const watchdog = this.clock.setTimeout(
      () =>
        fail(
          new Restart(
            'watchdog',
            `watch still open ${this.graceMs} ms after its timeoutSeconds=${timeoutSeconds} elapsed`,
          ),
        ),
      timeoutSeconds * 1000 + this.graceMs,
    );
    const started = this.clock.now();
    let events = 0;
    try {
      await this.lw.watch({ resourceVersion: this.rv ?? '', timeoutSeconds }, attempt.signal, (ev) => {
        // Superseded or failed attempts may still deliver buffered lines: ignore them.
        if (gen !== this.generation || attempt.signal.aborted) return;
        events++;
        try {
          this.handleEvent(ev, fail);
        } catch (err) {
          fail(new Restart('watch_error', `handling ${ev.type} event: ${errorMessage(err)}`, err));
        }
      });
    } catch (err) {
      if (stop.aborted) throw err;
      if (failure) throw failure;
      if (statusCodeOf(err) === 410) throw new Restart('gone', errorMessage(err), err);
      throw new Restart('watch_error', errorMessage(err), err);
    } finally {
      this.clock.clearTimeout(watchdog);
      stop.removeEventListener('abort', onStop);
    }
    if (failure) throw failure;
    if (events === 0 && this.clock.now() - started < MIN_WATCH_MS) {
      throw new Restart('watch_error', 'very short watch: closed within 1 s without any event');
    }
    this.logger.v(4).info(`Node watch closed by the server, resuming from ${this.rv}`);
  }

  private handleEvent(ev: RawWatchEvent, fail: (r: Restart) => void): void {
    switch (ev.type) {
      case 'ADDED':
      case 'MODIFIED': {
        const n = transformNode(ev.object);
        if (!n) return this.logger.warn(`Ignoring ${ev.type} watch event without a node name`);
        this.progress(n.metadata?.resourceVersion);
        const name = n.metadata!.name!;
        const old = this.cache.get(name);
        if (old && old.metadata?.resourceVersion === n.metadata?.resourceVersion) return;
        this.cache.set(name, n);
        if (old) this.emit('update', (h) => h.onUpdate(old, n));
        else this.emit('add', (h) => h.onAdd(n));
        return;
      }
      case 'DELETED': {
        const n = transformNode(ev.object);
        if (!n) return this.logger.warn('Ignoring DELETED watch event without a node name');
        this.progress(n.metadata?.resourceVersion);
        const name = n.metadata!.name!;
        this.cache.delete(name);
        this.emit('delete', (h) => h.onDelete(n, false));
        return;
      }
      case 'BOOKMARK': {
        const md = (ev.object as { metadata?: { resourceVersion?: unknown } } | undefined)?.metadata;
        this.progress(typeof md?.resourceVersion === 'string' ? detach(md.resourceVersion) : undefined);
        return;
      }
      case 'ERROR': {
        const s = (ev.object ?? {}) as { code?: unknown; message?: unknown; reason?: unknown };
        const code = typeof s.code === 'number' ? s.code : undefined;
        const msg = `watch ERROR event: ${typeof s.message === 'string' ? s.message : 'no message'}`;
        const cause = { statusCode: code, reason: s.reason };
        fail(new Restart(code === 410 ? 'gone' : 'watch_error', msg, cause));
        return;
      }
      default:
        this.logger.warn(`Ignoring watch event of unknown type ${JSON.stringify(ev.type)}`);
    }
  }

  /** A received event or bookmark: advance the RV, reset the backoff (R54), record liveness. */
  private progress(rv: string | undefined): void {
    if (rv !== undefined && rv !== '') this.rv = rv;
    this.failures = 0;
    this.goneStreak = 0;
    this.metrics?.informerLastEvent.set(this.clock.now() / 1000);
  }

  private emit(kind: string, fn: (h: NodeEventHandler) => void): void {
    for (const h of this.handlers) this.call(kind, () => fn(h));
  }

  private call(kind: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      // A failing handler must not break the watch or starve other handlers.
      this.logger.error(`Node ${kind} handler failed: ${errorMessage(err)}`);
    }
  }
}
