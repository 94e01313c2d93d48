// All time in the core goes through `Clock`, so tests and the simulator run in
// virtual time. Hand-written because fake-timer libraries patch globals, while
// the simulator runs two controllers on independent clocks in one process.

export interface TimerHandle {
  readonly id: number;
}

export interface Clock {
  /** Milliseconds since the Unix epoch (virtual or real). */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle | undefined): void;
}

/** Resolves after `ms` on `clock`, or rejects with the signal's reason once aborted. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortReason(signal));
      return;
    }
    const onAbort = (): void => {
      clock.clearTimeout(handle);
      reject(abortReason(signal!));
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function abortReason(signal: AbortSignal): unknown {
  const r: unknown = signal.reason;
  if (r instanceof Error && r.name === 'AbortError') return r;
  const e = new Error('The operation was aborted', { cause: r });
  e.name = 'AbortError';
  return e;
}

export class RealClock implements Clock {
  private seq = 0;
  private readonly timers = new Map<number, NodeJS.Timeout>();

  now(): number {
    return Date.now();
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = ++this.seq;
    const t = globalThis.setTimeout(
      () => {
        this.timers.delete(id);
        fn();
      },
      Math.max(0, ms),
    );
    this.timers.set(id, t);
    return { id };
  }

  clearTimeout(handle: TimerHandle | undefined): void {
    if (!handle) return;
    const t = this.timers.get(handle.id);
    if (t) globalThis.clearTimeout(t);
    this.timers.delete(handle.id);
  }
}

interface VirtualTimer {
  readonly id: number;
  readonly at: number;
  readonly fn: () => void;
}

/** Lets every pending promise continuation run (setImmediate runs after the microtask queue drains). */
export function flushMicrotasks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Deterministic virtual clock. Timers fire in (time, creation) order; between
 * two timers all pending promise continuations run, so async code that only
 * waits on this clock behaves as it would in real time, just instantly.
 */
export class VirtualClock implements Clock {
  private current: number;
  private seq = 0;
  private readonly heap: VirtualTimer[] = [];
  private readonly cancelled = new Set<number>();

  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = ++this.seq;
    this.push({ id, at: this.current + Math.max(0, ms), fn });
    return { id };
  }

  clearTimeout(handle: TimerHandle | undefined): void {
    if (handle) this.cancelled.add(handle.id);
  }

  /** Number of timers not yet fired or cancelled. */
  pendingTimers(): number {
    return this.heap.filter((t) => !this.cancelled.has(t.id)).length;
  }

  /** Time of the earliest live timer, if any. */
  nextTimerAt(): number | undefined {
    this.dropCancelledTop();
    return this.heap[0]?.at;
  }

  /** Advances virtual time by `ms`, firing due timers in order. */
  async advance(ms: number): Promise<void> {
    await this.advanceTo(this.current + ms);
  }

  async advanceTo(target: number): Promise<void> {
    await flushMicrotasks();
    for (;;) {
      this.dropCancelledTop();
      const top = this.heap[0];
      if (!top || top.at > target) break;
      this.pop();
      this.current = Math.max(this.current, top.at);
      top.fn();
      await flushMicrotasks();
    }
    this.current = Math.max(this.current, target);
    await flushMicrotasks();
  }

  /** Fires timers until none is left or `limitMs` of virtual time has passed. */
  async runAll(limitMs = 24 * 3600_000): Promise<void> {
    const end = this.current + limitMs;
    for (;;) {
      const at = this.nextTimerAt();
      if (at === undefined || at > end) break;
      await this.advanceTo(at);
    }
  }

  private dropCancelledTop(): void {
    while (this.heap.length > 0 && this.cancelled.has(this.heap[0]!.id)) {
      this.cancelled.delete(this.heap[0]!.id);
      this.pop();
    }
  }

  private less(a: VirtualTimer, b: VirtualTimer): boolean {
    return a.at < b.at || (a.at === b.at && a.id < b.id);
  }

  private push(t: VirtualTimer): void {
    const h = this.heap;
    h.push(t);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop()!;
    if (h.length === 0) return;
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.less(h[l]!, h[m]!)) m = l;
      if (r < h.length && this.less(h[r]!, h[m]!)) m = r;
      if (m === i) break;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
}
