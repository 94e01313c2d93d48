// A scripted NodeListWatch for the informer's unit tests: list replies are
// queued, watches are driven by hand (send, end, fail).
import type { NodeEventHandler } from '../../core/ports.ts';
import type { Node } from '../../core/types.ts';
import type { NodeListPage, NodeListWatch, RawWatchEvent } from '../node-transport.ts';

export function raw(name: string, rv: string, uid = `uid-${name}`): object {
  return {
    metadata: { name, uid, resourceVersion: rv, managedFields: [{ manager: 'kubelet' }] },
    spec: { podCIDRs: ['10.0.0.0/24'] },
    status: { images: [{ names: ['x'] }] },
  };
}

export class FakeWatch {
  readonly params: { resourceVersion: string; timeoutSeconds: number };
  readonly signal: AbortSignal;
  readonly onEvent: (e: RawWatchEvent) => void;
  readonly promise: Promise<void>;
  private resolve!: () => void;
  private reject!: (e: unknown) => void;
  constructor(
    params: { resourceVersion: string; timeoutSeconds: number },
    signal: AbortSignal,
    onEvent: (e: RawWatchEvent) => void,
  ) {
    this.params = params;
    this.signal = signal;
    this.onEvent = onEvent;
    this.promise = new Promise<void>((res, rej) => {
      this.resolve = res;
      this.reject = rej;
    });
    const onAbort = (): void => {
      const e = new Error('aborted');
      e.name = 'AbortError';
      this.reject(e);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort);
  }
  send(type: string, object: unknown): void {
    this.onEvent({ type, object });
  }
  end(): void {
    this.resolve();
  }
  fail(err: unknown): void {
    this.reject(err);
  }
}

export interface FakePage extends NodeListPage {
  readonly items: readonly unknown[];
}
export type ListReply = FakePage | Error;

export class FakeListWatch implements NodeListWatch {
  readonly lists: { limit: number; continue?: string; resourceVersion?: '0' }[] = [];
  readonly watches: FakeWatch[] = [];
  resets = 0;
  replies: ((p: { limit: number; continue?: string; resourceVersion?: '0' }) => ListReply)[] = [];
  list(
    params: { limit: number; continue?: string; resourceVersion?: '0' },
    _signal: AbortSignal,
    onItem: (item: unknown) => void,
  ): Promise<NodeListPage> {
    this.lists.push(params);
    const next = this.replies.shift();
    if (!next) return Promise.reject(new Error('no scripted list reply'));
    const r = next(params);
    if (r instanceof Error) return Promise.reject(r);
    for (const item of r.items) onItem(item);
    return Promise.resolve({ resourceVersion: r.resourceVersion, continue: r.continue });
  }
  watch(
    params: { resourceVersion: string; timeoutSeconds: number },
    signal: AbortSignal,
    onEvent: (e: RawWatchEvent) => void,
  ): Promise<void> {
    const w = new FakeWatch(params, signal, onEvent);
    this.watches.push(w);
    return w.promise;
  }
  resetConnections(): void {
    this.resets++;
  }
  get watch0(): FakeWatch {
    const w = this.watches.at(-1);
    if (!w) throw new Error('no watch open');
    return w;
  }
}

export function page(items: object[], rv: string, cont?: string): () => FakePage {
  return () => ({ items, resourceVersion: rv, continue: cont });
}

export interface Seen {
  kind: string;
  name: string | undefined;
  rv?: string | undefined;
  tombstone?: boolean;
}

export function recorder(): { seen: Seen[]; handler: NodeEventHandler } {
  const seen: Seen[] = [];
  const md = (n: Node): { name: string | undefined; rv: string | undefined } => ({
    name: n.metadata?.name,
    rv: n.metadata?.resourceVersion,
  });
  return {
    seen,
    handler: {
      onAdd: (n) => seen.push({ kind: 'add', ...md(n) }),
      onUpdate: (_o, n) => seen.push({ kind: 'update', ...md(n) }),
      onDelete: (n, tombstone) => seen.push({ kind: 'delete', ...md(n), tombstone }),
    },
  };
}
