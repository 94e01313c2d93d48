// Go duration syntax (`500ms`, `1h30m`): the daemon's flags keep upstream's
// format (SPEC §7.1) and log lines print durations as Go does.

const UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** Parses a Go duration into milliseconds; throws on bad input. */
export function parseDuration(text: string): number {
  const s = text.trim();
  if (s === '0') return 0;
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let matched = 0;
  let sign = 1;
  let body = s;
  if (body.startsWith('-') || body.startsWith('+')) {
    sign = body.startsWith('-') ? -1 : 1;
    body = body.slice(1);
  }
  if (body === '') throw new Error(`time: invalid duration "${text}"`);
  re.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = re.exec(body)) !== null) {
    total += Number.parseFloat(m[1]!) * UNITS[m[2]!]!;
    matched = re.lastIndex;
  }
  if (matched !== body.length) throw new Error(`time: invalid duration "${text}"`);
  return sign * total;
}

function trimNum(n: number, digits: number): string {
  return n.toFixed(digits).replace(/\.?0+$/, '');
}

/** Formats milliseconds like Go's time.Duration.String(). */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  const neg = ms < 0;
  const a = Math.abs(ms);
  let out: string;
  if (a < 1e-3) out = `${trimNum(a * 1e6, 0)}ns`;
  else if (a < 1) out = `${trimNum(a * 1e3, 3)}µs`;
  else if (a < 1000) out = `${trimNum(a, 6)}ms`;
  else {
    const h = Math.floor(a / 3_600_000);
    const m = Math.floor((a % 3_600_000) / 60_000);
    const sec = (a % 60_000) / 1000;
    out = `${h > 0 ? `${h}h` : ''}${h > 0 || m > 0 ? `${m}m` : ''}${trimNum(sec, 9)}s`;
  }
  return neg ? `-${out}` : out;
}
