// client-go's EventCorrelator (tools/record/events_cache.go), pure and on an
// injected clock: aggregation of similar events, de-duplication of identical
// ones into a count patch, and the per-object spam filter (R34).
import type { Clock } from '../core/clock.ts';
import { TokenBucket } from '../core/rate-limiter.ts';

export interface ObjectReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  namespace?: string;
  fieldPath?: string;
}

/** A core/v1 Event as sent to the apiserver. */
export interface CoreV1Event {
  apiVersion: 'v1';
  kind: 'Event';
  metadata: { name: string; namespace: string; resourceVersion?: string };
  involvedObject: ObjectReference;
  reason: string;
  message: string;
  type: string;
  source: { component: string; host?: string };
  reportingComponent: string;
  reportingInstance: string;
  firstTimestamp: string;
  lastTimestamp: string;
  count: number;
}

/** What client-go's two-way merge patch of a repeated event contains. */
export interface EventPatch {
  count: number;
  lastTimestamp: string;
  message: string;
}

export type CorrelateResult =
  | { readonly skip: true }
  | {
      readonly skip: false;
      readonly event: CoreV1Event;
      /** Cache key to pass to updateState after the write. */
      readonly key: string;
      /** Set when an earlier occurrence exists: PATCH it instead of creating. */
      readonly patch: EventPatch | undefined;
    };

export interface EventCorrelatorOptions {
  readonly clock: Clock;
  /** Events per source+object before the refill rate applies (default 25). */
  readonly burst?: number;
  /** Refill rate in events per second (default 1/300: one per 5 minutes). */
  readonly qps?: number;
  /** Distinct messages of one reason within the interval before aggregation (default 10). */
  readonly maxEvents?: number;
  /** Aggregation window (default 10 minutes). */
  readonly aggregateIntervalMs?: number;
  /** Entries per LRU cache (default 4096). */
  readonly cacheSize?: number;
}

/** Least-recently-used map with a fixed capacity (groupcache/lru semantics). */
export class Lru<V> {
  private readonly max: number;
  private readonly map = new Map<string, V>();
  constructor(max: number) {
    this.max = max;
  }
  get(key: string): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }
  set(key: string, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value!);
  }
  get size(): number {
    return this.map.size;
  }
}

const SEP = '\u0000';

function objectKey(e: CoreV1Event): string[] {
  const o = e.involvedObject;
  return [e.source.component, e.source.host ?? '', o.kind, o.namespace ?? '', o.name, o.uid, o.apiVersion];
}

/** Full identity of an event: repeats of it become count patches. */
export function eventKey(e: CoreV1Event): string {
  const o = e.involvedObject;
  return [
    e.source.component,
    e.source.host ?? '',
    o.kind,
    o.namespace ?? '',
    o.name,
    o.fieldPath ?? '',
    o.uid,
    o.apiVersion,
    e.type,
    e.reason,
    e.message,
  ].join(SEP);
}

/** Spam-filter key: source + involved object. */
export function spamKey(e: CoreV1Event): string {
  return objectKey(e).join(SEP);
}

/** Aggregation key: like the spam key plus type, reason and reporter (message excluded). */
export function aggregateKey(e: CoreV1Event): string {
  return [...objectKey(e), e.type, e.reason, e.reportingComponent, e.reportingInstance].join(SEP);
}

let nameSeq = 0;

/** client-go's `<object>.<hex unix nanos>`; the sequence keeps names unique within a millisecond. */
export function eventName(objectName: string, nowMs: number): string {
  nameSeq = (nameSeq + 1) % 1_000_000;
  const nanos = BigInt(Math.floor(nowMs)) * 1_000_000n + BigInt(nameSeq);
  return `${objectName}.${nanos.toString(16)}`;
}

export function rfc3339Seconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

interface AggregateRecord {
  localKeys: Set<string>;
  lastMs: number;
}

interface EventLog {
  count: number;
  firstTimestamp: string;
  name: string;
  resourceVersion: string | undefined;
}

export class EventCorrelator {
  private readonly clock: Clock;
  private readonly burst: number;
  private readonly qps: number;
  private readonly maxEvents: number;
  private readonly intervalMs: number;
  private readonly spam: Lru<TokenBucket>;
  private readonly aggregates: Lru<AggregateRecord>;
  private readonly observed: Lru<EventLog>;

  constructor(opts: EventCorrelatorOptions) {
    this.clock = opts.clock;
    this.burst = opts.burst ?? 25;
    this.qps = opts.qps ?? 1 / 300;
    this.maxEvents = opts.maxEvents ?? 10;
    this.intervalMs = opts.aggregateIntervalMs ?? 600_000;
    const size = opts.cacheSize ?? 4096;
    this.spam = new Lru(size);
    this.aggregates = new Lru(size);
    this.observed = new Lru(size);
  }

  /** Aggregate, observe, then spam-filter, in client-go's order. */
  correlate(event: CoreV1Event): CorrelateResult {
    const { event: aggregated, key } = this.aggregate(event);
    const { event: observed, patch } = this.observe(aggregated, key);
    if (this.filtered(observed)) return { skip: true };
    return { skip: false, event: observed, key, patch };
  }

  /** Records the server's view (name, resourceVersion, count) after a successful write. */
  updateState(key: string, written: CoreV1Event): void {
    this.observed.set(key, {
      count: written.count,
      firstTimestamp: written.firstTimestamp,
      name: written.metadata.name,
      resourceVersion: written.metadata.resourceVersion,
    });
  }

  private aggregate(event: CoreV1Event): { event: CoreV1Event; key: string } {
    const now = this.clock.now();
    const aKey = aggregateKey(event);
    let rec = this.aggregates.get(aKey);
    if (rec === undefined || now - rec.lastMs > this.intervalMs) rec = { localKeys: new Set(), lastMs: now };
    rec.localKeys.add(event.message);
    rec.lastMs = now;
    this.aggregates.set(aKey, rec);
    if (rec.localKeys.size < this.maxEvents) return { event, key: eventKey(event) };
    // Keep the set bounded at maxEvents - 1, as client-go's PopAny does.
    rec.localKeys.delete(rec.localKeys.values().next().value!);
    const ts = rfc3339Seconds(now);
    return {
      key: aKey,
      event: {
        ...event,
        metadata: { name: eventName(event.involvedObject.name, now), namespace: event.metadata.namespace },
        count: 1,
        firstTimestamp: ts,
        lastTimestamp: ts,
        message: `(combined from similar events): ${event.message}`,
      },
    };
  }

  private observe(event: CoreV1Event, key: string): { event: CoreV1Event; patch: EventPatch | undefined } {
    const last = this.observed.get(key);
    let out = event;
    let patch: EventPatch | undefined;
    if (last !== undefined && last.count > 0) {
      out = {
        ...event,
        metadata: {
          name: last.name,
          namespace: event.metadata.namespace,
          ...(last.resourceVersion === undefined ? {} : { resourceVersion: last.resourceVersion }),
        },
        firstTimestamp: last.firstTimestamp,
        count: last.count + 1,
      };
      patch = { count: out.count, lastTimestamp: out.lastTimestamp, message: out.message };
    }
    this.observed.set(key, {
      count: out.count,
      firstTimestamp: out.firstTimestamp,
      name: out.metadata.name,
      resourceVersion: out.metadata.resourceVersion,
    });
    return { event: out, patch };
  }

  private filtered(event: CoreV1Event): boolean {
    const k = spamKey(event);
    let bucket = this.spam.get(k);
    if (bucket === undefined) bucket = new TokenBucket(this.clock, this.qps, this.burst);
    this.spam.set(k, bucket);
    return !bucket.tryAccept();
  }
}
