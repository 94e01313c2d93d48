// The two apiserver calls behind the node informer, as an interface so the
// informer's state machine can be unit-tested against a scripted fake.
import type { KubeClient } from './kube-client.ts';
import { ListScanner } from './list-scanner.ts';
import { detach } from './node-cache.ts';
import { parseNodeJson } from './node-json.ts';
import { ProtoListScanner } from './proto-list-scanner.ts';
import { PROTOBUF_CONTENT_TYPE } from './proto-messages.ts';

export interface NodeListPage {
  readonly resourceVersion: string;
  /** Set when more pages follow. */
  readonly continue: string | undefined;
}

export interface RawWatchEvent {
  /** ADDED, MODIFIED, DELETED, BOOKMARK or ERROR. */
  readonly type: string;
  readonly object: unknown;
}

export interface NodeListWatch {
  /**
   * One LIST page; `limit` 0 lists everything at once; `resourceVersion` "0"
   * (first page only) lets the apiserver answer from its watch cache. Each raw node object is
   * passed to `onItem` as it is parsed (the informer strips it before anything
   * else is allocated). Rejects with a statusCode-carrying error.
   */
  list(
    params: { limit: number; continue?: string; resourceVersion?: '0' },
    signal: AbortSignal,
    onItem: (item: unknown) => void,
  ): Promise<NodeListPage>;
  /**
   * Streams a WATCH from `resourceVersion`. Resolves when the server ends the
   * response (timeoutSeconds elapsed), rejects on an error status, a broken
   * connection or an abort. `onEvent` may be called until it settles.
   */
  watch(
    params: { resourceVersion: string; timeoutSeconds: number },
    signal: AbortSignal,
    onEvent: (event: RawWatchEvent) => void,
  ): Promise<void>;
  /** Called when a watch was found half-open (R57): idle connections are suspect too. */
  resetConnections?(): void;
}

function field(o: unknown, key: string): unknown {
  return typeof o === 'object' && o !== null ? (o as Record<string, unknown>)[key] : undefined;
}

/** The node LIST's preferred encoding (R110); JSON is always accepted as well. */
export type NodeListContentType = 'protobuf' | 'json';

const ACCEPT_PROTOBUF = `${PROTOBUF_CONTENT_TYPE}, application/json`;

/**
 * LIST/WATCH of `/api/v1/nodes` through a KubeClient (lists rate-limited,
 * watches exempt). Lists ask for protobuf by default (R110); watches are JSON.
 */
export function kubeNodeListWatch(
  client: KubeClient,
  contentType: NodeListContentType = 'protobuf',
): NodeListWatch {
  return {
    async list(params, signal, onItem) {
      const q = new URLSearchParams();
      if (params.limit > 0) q.set('limit', String(params.limit));
      if (params.continue !== undefined) q.set('continue', params.continue);
      if (params.resourceVersion !== undefined) q.set('resourceVersion', params.resourceVersion);
      const qs = q.toString();
      let scanner: ListScanner | ProtoListScanner | undefined;
      await client.requestStream(
        `/api/v1/nodes${qs === '' ? '' : `?${qs}`}`,
        { signal, accept: contentType === 'protobuf' ? ACCEPT_PROTOBUF : 'application/json' },
        (c, headers) => {
          // R110: the server picks; protobuf only if it says so.
          scanner ??= (headers['content-type'] ?? '').startsWith(PROTOBUF_CONTENT_TYPE)
            ? new ProtoListScanner(onItem)
            : new ListScanner(onItem, parseNodeJson);
          scanner.write(c);
        },
      );
      const rest = (scanner ?? new ListScanner(onItem, parseNodeJson)).end();
      const rv = field(rest['metadata'], 'resourceVersion');
      const cont = field(rest['metadata'], 'continue');
      if (typeof rv !== 'string') throw new Error('malformed NodeList: no metadata.resourceVersion');
      return {
        resourceVersion: detach(rv),
        continue: typeof cont === 'string' && cont !== '' ? cont : undefined,
      };
    },
    resetConnections() {
      client.resetIdleConnections();
    },
    watch(params, signal, onEvent) {
      const q = new URLSearchParams({
        watch: 'true',
        resourceVersion: params.resourceVersion,
        allowWatchBookmarks: 'true',
        timeoutSeconds: String(params.timeoutSeconds),
      });
      return client.watch(`/api/v1/nodes?${q.toString()}`, signal, (line) => {
        let parsed: unknown;
        try {
          parsed = parseNodeJson(line);
        } catch {
          // Surfaced as an ERROR event so the informer restarts the watch instead of skipping data.
          onEvent({
            type: 'ERROR',
            object: { kind: 'Status', code: 0, message: `unparsable watch event: ${line.slice(0, 120)}` },
          });
          return;
        }
        const type = field(parsed, 'type');
        onEvent({ type: typeof type === 'string' ? type : '', object: field(parsed, 'object') });
      });
    },
  };
}
