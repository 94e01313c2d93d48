// Cloud config of the `linux` provider: YAML or JSON text (JSON is YAML), validated
// up front so a typo fails at startup with the field named, not at the first route.
import { parseYaml } from '../../yaml/lazy.ts';

export interface LinuxConfig {
  /** Routing table name (from rt_tables) or id. */
  readonly table: string;
  /** Routing protocol number that marks the routes this provider owns. */
  readonly protocol: number;
  /** Network namespace name (`ip -n`); undefined: the controller's own namespace. */
  readonly netns: string | undefined;
  /** Path or name of the iproute2 `ip` binary. */
  readonly ipCommand: string;
}

// 200 is unassigned in the kernel's rtnetlink.h and iproute2's rt_protos, and
// above the range routing daemons use (FRR takes up to 198).
export const DEFAULT_PROTOCOL = 200;
export const DEFAULT_TABLE = 'main';

const FIELDS = ['table', 'protocol', 'netns', 'ipCommand'] as const;

export class LinuxConfigError extends Error {
  override readonly name: string = 'LinuxConfigError';
}

function fail(field: string, message: string): never {
  throw new LinuxConfigError(`linux cloud config: field "${field}" ${message}`);
}

function show(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v) : String(v);
}

// 0 would make `ip route show table 0` list every table, and `local`/255 holds the
// kernel's own local and broadcast routes, which this provider must never touch.
const FORBIDDEN_TABLES: ReadonlySet<string> = new Set(['0', 'all', 'unspec', 'local', '255', 'cache']);

function validateTable(v: unknown): string {
  if (v === undefined || v === null) return DEFAULT_TABLE;
  let text: string;
  if (typeof v === 'number') {
    if (!Number.isInteger(v) || v < 1 || v > 0xffffffff) {
      fail('table', `must be a table name or an integer 1..4294967295, got ${show(v)}`);
    }
    text = String(v);
  } else if (typeof v === 'string') {
    text = v.trim();
    if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(text)) {
      fail('table', `must be a table name (letters, digits, '_', '.', '-') or id, got ${show(v)}`);
    }
    if (/^[0-9]+$/.test(text)) {
      const n = Number(text);
      if (n > 0xffffffff) fail('table', `must be an integer 1..4294967295, got ${show(v)}`);
      text = String(n);
    }
  } else {
    fail('table', `must be a string or a number, got ${typeof v}`);
  }
  if (FORBIDDEN_TABLES.has(text.toLowerCase())) {
    fail('table', `must not be ${show(text)}: it selects all tables or the kernel's local table`);
  }
  return text;
}

function validateProtocol(v: unknown): number {
  if (v === undefined || v === null) return DEFAULT_PROTOCOL;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 255) {
    fail('protocol', `must be an integer 5..255, got ${show(v)}`);
  }
  if (v <= 4) {
    fail(
      'protocol',
      `must not be ${v}: 0-4 (unspec, redirect, kernel, boot, static) are reserved by the kernel ` +
        `and shared with routes other tools add; pick an unused number such as ${DEFAULT_PROTOCOL}`,
    );
  }
  return v;
}

function validateName(field: string, v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') fail(field, `must be a string, got ${typeof v}`);
  // No shell is involved, but a leading '-' would still be read by ip as an option.
  if (v === '' || v.startsWith('-') || /[\s\0]/.test(v)) {
    fail(field, `must be non-empty, without whitespace and not start with '-', got ${show(v)}`);
  }
  return v;
}

export function parseLinuxConfig(text: string): LinuxConfig {
  let raw: unknown;
  try {
    raw = text.trim() === '' ? {} : parseYaml(text);
  } catch (err) {
    throw new LinuxConfigError(`linux cloud config: not valid YAML or JSON: ${(err as Error).message}`);
  }
  if (raw === null || raw === undefined) raw = {};
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw new LinuxConfigError(
      `linux cloud config: must be a mapping with fields ${FIELDS.join(', ')}, got ${Array.isArray(raw) ? 'a list' : typeof raw}`,
    );
  }
  const obj = raw as Record<string, unknown>;
  for (const key of Object.keys(obj)) {
    if (!(FIELDS as readonly string[]).includes(key)) {
      fail(key, `is unknown; known fields: ${FIELDS.join(', ')}`);
    }
  }
  return {
    table: validateTable(obj.table),
    protocol: validateProtocol(obj.protocol),
    netns: validateName('netns', obj.netns),
    ipCommand: validateName('ipCommand', obj.ipCommand) ?? 'ip',
  };
}
