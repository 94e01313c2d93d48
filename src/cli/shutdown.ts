// Graceful shutdown (R63): the first SIGTERM/SIGINT stops triggers and
// timers; a running reconcile gets 20 s to finish, then its calls are aborted
// and it gets 5 s more. A second signal exits 1 at once.
import { sleep, type Clock } from '../core/clock.ts';
import type { Logger } from '../core/ports.ts';

export interface ShutdownOptions {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly exit: (code: number) => void;
  /** How long a running reconcile may finish (default 20 s). */
  readonly graceMs?: number;
  /** How long to wait after aborting it (default 5 s). */
  readonly abortWaitMs?: number;
}

export type DrainResult = 'finished' | 'aborted' | 'abandoned';

export class Shutdown {
  /** Aborted by the first signal: no new reconcile starts. */
  readonly stop = new AbortController();
  /** Aborted after the grace period (or on lost leadership): in-flight calls end. */
  readonly hardStop = new AbortController();
  private readonly o: ShutdownOptions;
  private signals = 0;

  constructor(opts: ShutdownOptions) {
    this.o = opts;
  }

  get requested(): boolean {
    return this.stop.signal.aborted;
  }

  /** Signal handler: graceful on the first, immediate exit 1 on the second. */
  onSignal = (name: string): void => {
    this.signals++;
    if (this.signals > 1) {
      this.o.logger.warn(`Received second signal ${name}, exiting immediately`);
      this.o.exit(1);
      return;
    }
    this.o.logger.info(`Received ${name}, shutting down`);
    this.stop.abort(new Error(`received ${name}`));
  };

  /**
   * Waits for `running` (the controller's run) after the stop: ≤ grace, then
   * aborts in-flight calls and waits ≤ abortWait more.
   */
  async drain(running: Promise<unknown>): Promise<DrainResult> {
    const settled = running.then(
      () => true,
      () => true,
    );
    const within = async (ms: number): Promise<boolean> => {
      const timer = new AbortController();
      const r = await Promise.race([
        settled,
        sleep(this.o.clock, ms, timer.signal).then(
          () => false,
          () => false,
        ),
      ]);
      timer.abort();
      return r;
    };
    if (await within(this.o.graceMs ?? 20_000)) return this.hardStop.signal.aborted ? 'aborted' : 'finished';
    this.o.logger.warn('Reconcile still running after the grace period, aborting its calls');
    this.hardStop.abort(new Error('shutdown grace period expired'));
    if (await within(this.o.abortWaitMs ?? 5_000)) return 'aborted';
    this.o.logger.error('Reconcile did not stop after its calls were aborted; exiting anyway');
    return 'abandoned';
  }
}
