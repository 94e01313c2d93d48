// Keeps credentials out of logs: values of sensitive keys, bearer tokens and
// the values of secret-looking environment variables (AWS_SECRET_ACCESS_KEY,
// HCLOUD_TOKEN, ...) are replaced wherever they appear. Providers must not log
// credentials (R7); this is the second line of defence.

export const REDACTED = '[REDACTED]';

const SENSITIVE_KEY =
  /token|password|passwd|secret|authorization|credential|api[-_]?key|private[-_]?key|cookie/i;
const SENSITIVE_ENV = /TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|API_KEY|ACCESS_KEY|PRIVATE_KEY/i;
/** Shorter values would redact ordinary words and numbers. */
const MIN_SECRET_LENGTH = 6;
const MAX_DEPTH = 8;

const TEXT_PATTERNS: readonly [RegExp, string][] = [
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g, `$1 ${REDACTED}`],
  [
    /\b((?:access[-_]?)?token|password|passwd|secret|authorization|api[-_]?key)(["']?\s*[:=]\s*["']?)[^\s"',;&}]+/gi,
    `$1$2${REDACTED}`,
  ],
];

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export class Redactor {
  private readonly secrets: RegExp | undefined;

  constructor(env: Readonly<Record<string, string | undefined>> = process.env) {
    const values = Object.entries(env)
      .filter(([k, v]) => SENSITIVE_ENV.test(k) && v !== undefined && v.length >= MIN_SECRET_LENGTH)
      .map(([, v]) => v!)
      // Longest first, so a secret containing another is replaced whole.
      .sort((a, b) => b.length - a.length);
    this.secrets = values.length > 0 ? new RegExp(values.map(escapeRegExp).join('|'), 'g') : undefined;
  }

  text(s: string): string {
    let out = this.secrets ? s.replace(this.secrets, REDACTED) : s;
    for (const [re, repl] of TEXT_PATTERNS) out = out.replace(re, repl);
    return out;
  }

  /** A redacted deep copy; Errors become their (redacted) message. */
  value(v: unknown, depth = 0): unknown {
    if (typeof v === 'string') return this.text(v);
    if (v === null || typeof v !== 'object') return typeof v === 'bigint' ? v.toString() : v;
    if (depth >= MAX_DEPTH) return '[…]';
    if (v instanceof Error) return this.text(v.message);
    if (v instanceof Date) return v.toISOString();
    if (Array.isArray(v)) return v.map((x) => this.value(x, depth + 1));
    if (v instanceof Set) return [...v].map((x) => this.value(x, depth + 1));
    const out: Record<string, unknown> = {};
    const entries = v instanceof Map ? [...v.entries()] : Object.entries(v);
    for (const [k, x] of entries) {
      const key = String(k);
      out[key] = SENSITIVE_KEY.test(key) && x !== undefined && x !== '' ? REDACTED : this.value(x, depth + 1);
    }
    return out;
  }
}
