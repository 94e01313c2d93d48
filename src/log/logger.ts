// The daemon's Logger (src/core/ports.ts) on pino: klog-style verbosity
// (`-v`), klog-like text lines by default, one JSON object per line with
// `--log-format=json`. Everything passes the Redactor first.
import pino from 'pino';
import type { LogFields, Logger } from '../core/ports.ts';
import { Redactor } from './redact.ts';

export type LogFormat = 'text' | 'json';

export interface LineSink {
  write(line: string): void;
}

export interface DaemonLoggerOptions {
  readonly format: LogFormat;
  readonly verbosity: number;
  /** Default: stderr, written synchronously so nothing is lost on exit. */
  readonly out?: LineSink;
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly now?: () => number;
  readonly pid?: number;
  /** Shown where klog shows `file:line`. */
  readonly name?: string;
}

/** Keys pino or the text format own; colliding fields get a `_` suffix. */
const RESERVED = new Set(['level', 'ts', 'msg', 'v', 'logger']);

function two(n: number): string {
  return String(n).padStart(2, '0');
}

function formatValue(v: unknown): string {
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v) ?? 'undefined';
}

/** `I1202 10:00:00.000000   12345 route_controller] msg key="value"` (klog's header). */
export function klogLine(rec: Record<string, unknown>, pid: number): string {
  const { level, ts, msg, v: _v, logger, ...fields } = rec;
  const sev = level === 'error' ? 'E' : level === 'warn' ? 'W' : 'I';
  const ms = typeof ts === 'number' ? ts * 1000 : Date.now();
  const d = new Date(ms);
  const micros = String(Math.floor((ms % 1000) * 1000)).padStart(6, '0');
  const head =
    `${sev}${two(d.getMonth() + 1)}${two(d.getDate())} ` +
    `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${micros} ` +
    `${String(pid).padStart(7)} ${typeof logger === 'string' ? logger : 'main'}] `;
  const kv = Object.entries(fields)
    .map(([k, x]) => ` ${k}=${formatValue(x)}`)
    .join('');
  return `${head}${String(msg ?? '')}${kv}\n`;
}

class KlogSink implements LineSink {
  private readonly out: LineSink;
  private readonly pid: number;
  constructor(out: LineSink, pid: number) {
    this.out = out;
    this.pid = pid;
  }
  write(line: string): void {
    this.out.write(klogLine(JSON.parse(line) as Record<string, unknown>, this.pid));
  }
}

export class DaemonLogger implements Logger {
  readonly verbosity: number;
  private readonly pino: pino.Logger;
  private readonly redactor: Redactor;

  private constructor(p: pino.Logger, verbosity: number, redactor: Redactor) {
    this.pino = p;
    this.verbosity = verbosity;
    this.redactor = redactor;
  }

  static create(opts: DaemonLoggerOptions): DaemonLogger {
    const now = opts.now ?? Date.now;
    const pid = opts.pid ?? process.pid;
    const base = opts.out ?? pino.destination({ dest: 2, sync: true });
    const sink = opts.format === 'json' ? base : new KlogSink(base, pid);
    const p = pino(
      {
        level: 'info',
        base: opts.format === 'json' ? { pid } : null,
        messageKey: 'msg',
        timestamp: () => `,"ts":${now() / 1000}`,
        formatters: { level: (label) => ({ level: label }) },
      },
      sink,
    );
    return new DaemonLogger(
      p.child({ logger: opts.name ?? 'cloud-route-controller' }),
      opts.verbosity,
      new Redactor(opts.env ?? process.env),
    );
  }

  /** A logger whose lines name `name` (klog's file, JSON's `logger`). */
  named(name: string): DaemonLogger {
    return new DaemonLogger(this.pino.child({ logger: name }), this.verbosity, this.redactor);
  }

  private emit(level: 'info' | 'warn' | 'error', v: number, msg: string, fields?: LogFields): void {
    const obj: Record<string, unknown> = level === 'info' ? { v } : {};
    if (fields) {
      const clean = this.redactor.value(fields) as Record<string, unknown>;
      for (const [k, x] of Object.entries(clean)) obj[RESERVED.has(k) ? `${k}_` : k] = x;
    }
    this.pino[level](obj, this.redactor.text(msg));
  }

  info(msg: string, fields?: LogFields): void {
    this.emit('info', 0, msg, fields);
  }
  warn(msg: string, fields?: LogFields): void {
    this.emit('warn', 0, msg, fields);
  }
  error(msg: string, fields?: LogFields): void {
    this.emit('error', 0, msg, fields);
  }
  v(level: number): { enabled: boolean; info(msg: string, fields?: LogFields): void } {
    const enabled = level <= this.verbosity;
    return {
      enabled,
      info: (msg, fields) => {
        if (enabled) this.emit('info', level, msg, fields);
      },
    };
  }
}
