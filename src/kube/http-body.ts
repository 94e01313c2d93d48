// Reading HTTP responses without pinning them: the listeners of a response
// may stay reachable from a pooled keep-alive socket, so each helper removes
// every closure over the body once it is done.
import type * as http from 'node:http';
import { KubeRequestError } from './kube-errors.ts';

export function collect(res: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = [];
    const onData = (c: Buffer): void => {
      chunks.push(c);
    };
    const onEnd = (): void => {
      cleanup();
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      chunks = [];
      resolve(body);
    };
    const onError = (err: Error): void => {
      cleanup();
      chunks = [];
      reject(err);
    };
    // The response may stay reachable from a pooled socket: drop every closure over the body.
    const cleanup = (): void => {
      res.off('data', onData);
      res.off('end', onEnd);
      res.off('error', onError);
      res.on('error', ignore);
    };
    res.on('data', onData);
    res.on('end', onEnd);
    res.on('error', onError);
  });
}

function ignore(): void {}

export const EMPTY = Buffer.alloc(0);

/** Wraps what a sink threw, to tell it from a broken connection. */
export class SinkError extends Error {
  override readonly name = 'SinkError';
}

/** Feeds a response to `sink` chunk by chunk; a throwing sink destroys the response. */
export function drain(res: http.IncomingMessage, sink: (chunk: Buffer) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const onData = (c: Buffer): void => {
      try {
        sink(c);
      } catch (err) {
        cleanup();
        res.destroy();
        reject(new SinkError('response handler failed', { cause: err }));
      }
    };
    const onEnd = (): void => {
      cleanup();
      resolve();
    };
    const onError = (err: Error): void => {
      cleanup();
      reject(err);
    };
    const cleanup = (): void => {
      res.off('data', onData);
      res.off('end', onEnd);
      res.off('error', onError);
      res.on('error', ignore);
    };
    res.on('data', onData);
    res.on('end', onEnd);
    res.on('error', onError);
  });
}

export function transportError(err: unknown, signal: AbortSignal | undefined): Error {
  if (signal?.aborted || (err instanceof Error && err.name === 'AbortError')) {
    const e = new Error('The operation was aborted', { cause: err });
    e.name = 'AbortError';
    return e;
  }
  if (err instanceof KubeRequestError) return err;
  const msg = err instanceof Error ? err.message : String(err);
  return new KubeRequestError(msg, { cause: err });
}
