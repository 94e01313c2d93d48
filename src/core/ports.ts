// Ports the core depends on; adapters (kube/, sim/, cloud/) implement them.
import type { Node, NodeCondition, NodeLister } from './types.ts';

export interface NodeEventHandler {
  onAdd(node: Node): void;
  onUpdate(oldNode: Node, newNode: Node): void;
  /** `tombstone`: the final state is unknown (R40: the object is not inspected). */
  onDelete(node: Node, tombstone: boolean): void;
}

/** The node cache: list + add/update/delete events + "synced" (R12, R58). */
export interface NodeSource extends NodeLister {
  hasSynced(): boolean;
  /** Resolves true once synced, false if the signal aborts first. */
  waitForSync(signal: AbortSignal): Promise<boolean>;
  /** Returns an unsubscribe function. */
  addEventHandler(handler: NodeEventHandler): () => void;
}

export interface NodeRef {
  readonly name: string;
  readonly uid: string;
}

/**
 * Writes `NetworkUnavailable` (R31) as a strategic merge patch to nodes/status.
 * Must throw an error with `statusCode` 409 on conflict and 404 when the node is gone (R32).
 */
export interface NodeStatusWriter {
  patchNodeCondition(node: NodeRef, condition: NodeCondition, signal: AbortSignal): Promise<void>;
}

export type EventType = 'Normal' | 'Warning';

/** Fire-and-forget like client-go's recorder: failures are only logged (R34). */
export interface EventRecorder {
  event(node: NodeRef, type: EventType, reason: string, message: string): void;
}

export type LogFields = Record<string, unknown>;

/** klog-flavoured logger: `v(n)` logs at Info only when verbosity >= n. */
export interface Logger {
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  v(level: number): { enabled: boolean; info(msg: string, fields?: LogFields): void };
}

export class ApiStatusError extends Error {
  override readonly name = 'ApiStatusError';
  readonly statusCode: number;
  constructor(statusCode: number, message: string) {
    super(message);
    this.statusCode = statusCode;
  }
}

export function statusCodeOf(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const r = err as Record<string, unknown>;
  const c = r['statusCode'] ?? r['code'];
  return typeof c === 'number' ? c : undefined;
}

export const noopRecorder: EventRecorder = { event: () => {} };

const noopV = { enabled: false, info: () => {} };
export const nopLogger: Logger = {
  info: () => {},
  warn: () => {},
  error: () => {},
  v: () => noopV,
};

export interface LogRecord {
  level: 'info' | 'warn' | 'error';
  v: number;
  msg: string;
  fields: LogFields | undefined;
}

/** Keeps every line; for tests and the simulator. */
export class MemoryLogger implements Logger {
  readonly records: LogRecord[] = [];
  readonly verbosity: number;
  constructor(verbosity = 10) {
    this.verbosity = verbosity;
  }
  info(msg: string, fields?: LogFields): void {
    this.records.push({ level: 'info', v: 0, msg, fields });
  }
  warn(msg: string, fields?: LogFields): void {
    this.records.push({ level: 'warn', v: 0, msg, fields });
  }
  error(msg: string, fields?: LogFields): void {
    this.records.push({ level: 'error', v: 0, msg, fields });
  }
  v(level: number): { enabled: boolean; info(msg: string, fields?: LogFields): void } {
    const enabled = level <= this.verbosity;
    return {
      enabled,
      info: (msg, fields) => {
        if (enabled) this.records.push({ level: 'info', v: level, msg, fields });
      },
    };
  }
  messages(): string[] {
    return this.records.map((r) => r.msg);
  }
}
