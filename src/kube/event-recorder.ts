// R34: core/v1 Events about Nodes, written like client-go's recorder: through
// the correlator (spam filter, aggregation, count patches), one write at a
// time so a repeat never overtakes the create it patches, fire-and-forget.
import * as os from 'node:os';
import { RealClock, sleep, type Clock } from '../core/clock.ts';
import { errorMessage } from '../core/errors.ts';
import {
  nopLogger,
  statusCodeOf,
  type EventRecorder,
  type EventType,
  type Logger,
  type NodeRef,
} from '../core/ports.ts';
import {
  EventCorrelator,
  eventName,
  rfc3339Seconds,
  type CoreV1Event,
  type EventCorrelatorOptions,
} from './event-correlator.ts';
import type { KubeClient } from './kube-client.ts';
import { STRATEGIC_MERGE_PATCH } from './node-status-writer.ts';

export interface KubeEventRecorderOptions {
  readonly client: Pick<KubeClient, 'requestJson'>;
  readonly logger?: Logger;
  readonly clock?: Clock;
  readonly random?: () => number;
  /** source.component and reportingComponent (default `route_controller`, upstream's). */
  readonly component?: string;
  /** source.host and reportingInstance (default the hostname). */
  readonly host?: string;
  /** Where Node events go (default `default`, as client-go does for cluster-scoped objects). */
  readonly namespace?: string;
  /** Write attempts per event on transport errors (default 12, client-go's maxTriesPerEvent). */
  readonly maxTries?: number;
  /** Sleep between attempts (default 10 s; the first one randomised). */
  readonly retryDelayMs?: number;
  /** Events waiting to be written before new ones are dropped (default 1000, client-go's queue). */
  readonly maxQueued?: number;
  readonly correlator?: Omit<EventCorrelatorOptions, 'clock'>;
}

type Obj = Record<string, unknown>;

export class KubeEventRecorder implements EventRecorder {
  readonly correlator: EventCorrelator;
  private readonly client: Pick<KubeClient, 'requestJson'>;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly component: string;
  private readonly host: string;
  private readonly namespace: string;
  private readonly maxTries: number;
  private readonly retryDelayMs: number;
  private readonly maxQueued: number;
  private readonly closer = new AbortController();
  private tail: Promise<void> = Promise.resolve();
  private queued = 0;

  constructor(opts: KubeEventRecorderOptions) {
    this.client = opts.client;
    this.logger = opts.logger ?? nopLogger;
    this.clock = opts.clock ?? new RealClock();
    this.random = opts.random ?? Math.random;
    this.component = opts.component ?? 'route_controller';
    this.host = (opts.host ?? os.hostname()).slice(0, 128);
    this.namespace = opts.namespace ?? 'default';
    this.maxTries = opts.maxTries ?? 12;
    this.retryDelayMs = opts.retryDelayMs ?? 10_000;
    this.maxQueued = opts.maxQueued ?? 1000;
    this.correlator = new EventCorrelator({ ...opts.correlator, clock: this.clock });
  }

  event(node: NodeRef, type: EventType, reason: string, message: string): void {
    if (this.closer.signal.aborted) return;
    const now = this.clock.now();
    const ts = rfc3339Seconds(now);
    const ev: CoreV1Event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: eventName(node.name, now), namespace: this.namespace },
      involvedObject: { apiVersion: 'v1', kind: 'Node', name: node.name, uid: node.uid },
      reason,
      message,
      type,
      source: { component: this.component, host: this.host },
      reportingComponent: this.component,
      reportingInstance: this.host,
      firstTimestamp: ts,
      lastTimestamp: ts,
      count: 1,
    };
    const r = this.correlator.correlate(ev);
    if (r.skip) {
      this.logger.v(2).info('Event dropped by the spam filter', { node: node.name, reason });
      return;
    }
    if (this.queued >= this.maxQueued) {
      this.logger.warn('Event queue full, dropping event', { node: node.name, reason });
      return;
    }
    this.queued++;
    this.tail = this.tail.then(async () => {
      try {
        await this.write(r.event, r.key, r.patch !== undefined && r.event.count > 1);
      } finally {
        this.queued--;
      }
    });
  }

  /** Resolves once every accepted event has been written or given up on. */
  flush(): Promise<void> {
    return this.tail;
  }

  /** Stops retrying and accepting events; pending writes end at their next wait. */
  async close(): Promise<void> {
    this.closer.abort();
    await this.tail;
  }

  private async write(event: CoreV1Event, key: string, update: boolean): Promise<void> {
    const signal = this.closer.signal;
    const base = `/api/v1/namespaces/${encodeURIComponent(this.namespace)}/events`;
    for (let attempt = 1; ; attempt++) {
      try {
        let written: unknown;
        if (update) {
          try {
            written = await this.client.requestJson(`${base}/${encodeURIComponent(event.metadata.name)}`, {
              method: 'PATCH',
              body: { count: event.count, lastTimestamp: event.lastTimestamp, message: event.message },
              contentType: STRATEGIC_MERGE_PATCH,
              signal,
            });
          } catch (err) {
            // The earlier occurrence expired (events have a TTL) or was deleted: create it anew.
            if (statusCodeOf(err) !== 404) throw err;
          }
        }
        if (written === undefined) {
          const { resourceVersion: _rv, ...metadata } = event.metadata;
          written = await this.client.requestJson(base, {
            method: 'POST',
            body: { ...event, metadata },
            signal,
          });
        }
        this.correlator.updateState(key, fromServer(written, event));
        return;
      } catch (err) {
        if (signal.aborted) return;
        const code = statusCodeOf(err);
        const fields = { node: event.involvedObject.name, reason: event.reason, error: errorMessage(err) };
        if (code !== undefined) {
          // The server answered: the same request would be rejected again (client-go: no retry).
          if (code === 409) this.logger.v(5).info('Server rejected event (will not retry!)', fields);
          else this.logger.error('Server rejected event (will not retry!)', { ...fields, statusCode: code });
          return;
        }
        if (attempt >= this.maxTries) {
          this.logger.error('Unable to write event (retry limit exceeded!)', fields);
          return;
        }
        this.logger.error('Unable to write event (may retry after sleeping)', fields);
        const delay = attempt === 1 ? this.retryDelayMs * this.random() : this.retryDelayMs;
        try {
          await sleep(this.clock, delay, signal);
        } catch {
          return;
        }
      }
    }
  }
}

/** The server's name, resourceVersion, count and firstTimestamp, falling back to what was sent. */
function fromServer(written: unknown, sent: CoreV1Event): CoreV1Event {
  const w = (typeof written === 'object' && written !== null ? written : {}) as Obj;
  const md = (typeof w['metadata'] === 'object' && w['metadata'] !== null ? w['metadata'] : {}) as Obj;
  const name = typeof md['name'] === 'string' ? md['name'] : sent.metadata.name;
  const rv = typeof md['resourceVersion'] === 'string' ? md['resourceVersion'] : undefined;
  return {
    ...sent,
    metadata: {
      name,
      namespace: sent.metadata.namespace,
      ...(rv === undefined ? {} : { resourceVersion: rv }),
    },
    count: typeof w['count'] === 'number' ? w['count'] : sent.count,
    firstTimestamp: typeof w['firstTimestamp'] === 'string' ? w['firstTimestamp'] : sent.firstTimestamp,
  };
}
