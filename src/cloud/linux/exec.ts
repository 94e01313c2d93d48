// Runs `ip` with execFile (never a shell: destinations and addresses come from
// Node objects) and bounds how many run at once, because the controller may
// have 200 calls in flight (R5) and each is a process.
import { execFile } from 'node:child_process';
import { AbortError } from '../../core/errors.ts';
import { IpExecError } from './ip.ts';

/** Runs `ip` with the given arguments; resolves stdout, rejects IpExecError or AbortError. */
export type IpRunner = (args: readonly string[], signal: AbortSignal) => Promise<string>;

export const DEFAULT_MAX_CONCURRENT = 16;

function abortError(signal: AbortSignal): AbortError {
  return new AbortError('The operation was aborted', { cause: signal.reason });
}

/** Counting semaphore whose waiters leave the queue when their signal aborts. */
class Semaphore {
  #free: number;
  readonly #waiters: (() => void)[] = [];
  constructor(size: number) {
    this.#free = size;
  }

  acquire(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(abortError(signal));
    if (this.#free > 0) {
      this.#free--;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const grant = (): void => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = (): void => {
        const i = this.#waiters.indexOf(grant);
        if (i >= 0) this.#waiters.splice(i, 1);
        reject(abortError(signal));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(grant);
    });
  }

  release(): void {
    const next = this.#waiters.shift();
    if (next) next();
    else this.#free++;
  }
}

function execIp(command: string, args: readonly string[], signal: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      {
        signal,
        encoding: 'utf8',
        maxBuffer: 256 * 1024 * 1024,
        // ip prints strerror() texts, which the error mapping matches in English.
        env: { ...process.env, LC_ALL: 'C' },
      },
      (err, stdout, stderr) => {
        if (!err) {
          resolve(stdout);
          return;
        }
        if (signal.aborted) {
          reject(abortError(signal));
          return;
        }
        const code = typeof err.code === 'number' || typeof err.code === 'string' ? err.code : undefined;
        const spawnFailed = typeof err.code === 'string';
        reject(new IpExecError(args, code, stderr, spawnFailed ? `${command}: ${err.message}` : undefined));
      },
    );
  });
}

export function createIpRunner(command: string, maxConcurrent = DEFAULT_MAX_CONCURRENT): IpRunner {
  const slots = new Semaphore(maxConcurrent);
  return async (args, signal) => {
    await slots.acquire(signal);
    try {
      return await execIp(command, args, signal);
    } finally {
      slots.release();
    }
  };
}
