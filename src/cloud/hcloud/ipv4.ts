// IPv4 parsing for route matching. Hetzner Cloud networks are IPv4-only, so
// the plug-in needs no IPv6 arithmetic; it only has to recognise and reject it.

export function parseIPv4(s: string): number | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  let n = 0;
  for (const p of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(p)) return undefined;
    const v = Number(p);
    if (v > 255) return undefined;
    n = n * 256 + v;
  }
  return n;
}

export function formatIPv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** Canonical `a.b.c.d/len` with host bits cleared, or undefined if not an IPv4 CIDR. */
export function canonicalIPv4Cidr(s: string): string | undefined {
  const m = /^([^/]+)\/(\d{1,2})$/.exec(s.trim());
  if (!m) return undefined;
  const addr = parseIPv4(m[1] ?? '');
  const len = Number(m[2]);
  if (addr === undefined || len > 32) return undefined;
  const mask = len === 0 ? 0 : (0xffffffff << (32 - len)) >>> 0;
  return `${formatIPv4((addr & mask) >>> 0)}/${len}`;
}

/** Canonical dotted quad, or the input unchanged if it is no IPv4 address. */
export function canonicalIPv4(s: string): string {
  const n = parseIPv4(s.trim());
  return n === undefined ? s : formatIPv4(n);
}
