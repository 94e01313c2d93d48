// CIDR parsing and canonical forms (SPEC §1 "Canonical CIDR"). Hand-written:
// Kubernetes reads IPv4 leading zeros as decimal (netutils.ParseCIDRSloppy),
// which no npm IP library does, and the planner needs first/last addresses as
// 128-bit integers (R13).
import { isIPv6 } from 'node:net';

export type IPFamily = 4 | 6;

export interface Cidr {
  readonly family: IPFamily;
  /** Network address with host bits cleared. */
  readonly ip: bigint;
  readonly prefix: number;
  /** Host bits cleared, RFC 5952 for IPv6, `/len`. */
  readonly canonical: string;
}

export class CidrParseError extends Error {
  override readonly name = 'CidrParseError';
}

function bitsOf(family: IPFamily): number {
  return family === 4 ? 32 : 128;
}

function parseIPv4(s: string): bigint | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  let v = 0n;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p)) return undefined;
    const n = Number.parseInt(p, 10);
    if (n > 255) return undefined;
    v = (v << 8n) | BigInt(n);
  }
  return v;
}

function parseIPv6(s: string): bigint | undefined {
  if (!isIPv6(s) || s.includes('%')) return undefined;
  let text = s;
  // Embedded IPv4 tail (::ffff:1.2.3.4) becomes two hex groups.
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const v4 = parseIPv4(tail);
    if (v4 === undefined) return undefined;
    text = `${text.slice(0, lastColon + 1)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const h = head === '' ? [] : head.split(':');
  const r = rest === undefined ? [] : rest === '' ? [] : rest.split(':');
  const missing = 8 - h.length - r.length;
  if (rest === undefined ? h.length !== 8 : missing < 1) return undefined;
  const groups = rest === undefined ? h : [...h, ...Array<string>(missing).fill('0'), ...r];
  let v = 0n;
  for (const g of groups) v = (v << 16n) | BigInt(Number.parseInt(g, 16));
  return v;
}

/** Parses an IP address the way Kubernetes does (IPv4 leading zeros as decimal). */
export function parseIP(s: string): { family: IPFamily; ip: bigint } | undefined {
  const v4 = parseIPv4(s);
  if (v4 !== undefined) return { family: 4, ip: v4 };
  const v6 = parseIPv6(s);
  if (v6 !== undefined) return { family: 6, ip: v6 };
  return undefined;
}

export function formatIP(family: IPFamily, ip: bigint): string {
  if (family === 4) {
    return [24n, 16n, 8n, 0n].map((sh) => ((ip >> sh) & 0xffn).toString()).join('.');
  }
  const groups: number[] = [];
  for (let i = 7; i >= 0; i--) groups.push(Number((ip >> BigInt(i * 16)) & 0xffffn));
  // RFC 5952: compress the longest run (>= 2) of zero groups, the first on ties.
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

function mask(family: IPFamily, prefix: number): bigint {
  const bits = BigInt(bitsOf(family));
  const all = (1n << bits) - 1n;
  return (all >> BigInt(prefix)) ^ all;
}

/** Parses `addr/len`; throws CidrParseError with a Go-like message. */
export function parseCIDR(text: string): Cidr {
  const slash = text.indexOf('/');
  if (slash < 0) throw new CidrParseError(`invalid CIDR address: ${text}`);
  const addr = parseIP(text.slice(0, slash));
  const lenText = text.slice(slash + 1);
  if (!addr || !/^\d{1,3}$/.test(lenText)) throw new CidrParseError(`invalid CIDR address: ${text}`);
  const prefix = Number.parseInt(lenText, 10);
  if (prefix > bitsOf(addr.family)) throw new CidrParseError(`invalid CIDR address: ${text}`);
  const ip = addr.ip & mask(addr.family, prefix);
  return { family: addr.family, ip, prefix, canonical: `${formatIP(addr.family, ip)}/${prefix}` };
}

export function tryParseCIDR(text: string): Cidr | undefined {
  try {
    return parseCIDR(text);
  } catch {
    return undefined;
  }
}

/** Canonical form, or undefined if unparsable. */
export function canonicalCIDR(text: string): string | undefined {
  return tryParseCIDR(text)?.canonical;
}

export function firstAddress(c: Cidr): bigint {
  return c.ip;
}

export function lastAddress(c: Cidr): bigint {
  const hostBits = BigInt(bitsOf(c.family) - c.prefix);
  return c.ip | ((1n << hostBits) - 1n);
}

export function containsIP(c: Cidr, family: IPFamily, ip: bigint): boolean {
  return c.family === family && (ip & mask(c.family, c.prefix)) === c.ip;
}

/** True if the CIDR text had host bits set (the daemon warns and clears them, R60). */
export function hasHostBits(text: string): boolean {
  const c = tryParseCIDR(text);
  if (!c) return false;
  const addr = parseIP(text.slice(0, text.indexOf('/')));
  return addr !== undefined && addr.ip !== c.ip;
}

// Route destinations and pod CIDRs are the same strings reconcile after
// reconcile; memoising their parse keeps a 20 000-route plan cheap.
const memo = new Map<string, Cidr | CidrParseError>();
const MEMO_LIMIT = 200_000;

/** Parses with memoisation; returns (never throws) the error for bad input. */
export function parseCIDRCached(text: string): Cidr | CidrParseError {
  let r = memo.get(text);
  if (r !== undefined) return r;
  try {
    r = parseCIDR(text);
  } catch (err) {
    r = err instanceof CidrParseError ? err : new CidrParseError(String(err));
  }
  if (memo.size >= MEMO_LIMIT) memo.clear();
  memo.set(text, r);
  return r;
}
