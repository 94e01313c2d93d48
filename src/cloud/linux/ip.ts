// iproute2 translation for the `linux` provider: argument vectors, parsing of
// `ip -json route` output and mapping of `ip` failures to the typed errors of
// SPEC §2.3. Pure functions, so they are tested without a kernel.
import { isIPv4, isIPv6 } from 'node:net';
import { PermanentError, RetryableError } from '../../core/errors.ts';
import type { LinuxConfig } from './config.ts';

export type Family = 4 | 6;

/** One route as `ip -json route show` reports it, reduced to what the provider needs. */
export interface IpRoute {
  /** Destination with prefix length; `default` and host routes made explicit. */
  readonly dst: string;
  /** `unicast` when ip omits it; otherwise blackhole, unreachable, prohibit, throw, ... */
  readonly type: string;
  /** Next-hop gateways: one for a plain route, several for multipath, none for a dev route. */
  readonly gateways: readonly string[];
  /** As printed: a number or a name from rt_protos; absent when the query filtered by protocol. */
  readonly protocol: string | undefined;
  readonly metric: number | undefined;
}

/** A failed or unstartable `ip` run, before classification. */
export class IpExecError extends Error {
  override readonly name: string = 'IpExecError';
  readonly args: readonly string[];
  /** Exit status, or the spawn error code (ENOENT, EACCES, ...). */
  readonly code: number | string | undefined;
  readonly stderr: string;
  constructor(args: readonly string[], code: number | string | undefined, stderr: string, message?: string) {
    super(message ?? `ip ${args.join(' ')}: ${stderr.trim() || `exit ${String(code)}`}`);
    this.args = args;
    this.code = code;
    this.stderr = stderr;
  }
}

function familyFlag(family: Family): string {
  return family === 4 ? '-4' : '-6';
}

function globalArgs(config: LinuxConfig, family: Family): string[] {
  return config.netns === undefined ? [familyFlag(family)] : ['-n', config.netns, familyFlag(family)];
}

/** `ip [-n ns] -4|-6 -json route show table T [proto P] [exact DST]`. */
export function listArgs(
  config: LinuxConfig,
  family: Family,
  opts: { exact?: string; anyProtocol?: boolean } = {},
): string[] {
  const args = [...globalArgs(config, family), '-json', 'route', 'show', 'table', config.table];
  if (opts.anyProtocol !== true) args.push('proto', String(config.protocol));
  if (opts.exact !== undefined) args.push('exact', opts.exact);
  return args;
}

/** `replace` makes create idempotent and turns a route to another node into ours (R2). */
export function replaceArgs(config: LinuxConfig, family: Family, dst: string, gateway: string): string[] {
  return [
    ...globalArgs(config, family),
    'route',
    'replace',
    dst,
    'via',
    gateway,
    'table',
    config.table,
    'proto',
    String(config.protocol),
  ];
}

/**
 * The kernel matches `proto` and, when given, `via` on delete, so a foreign route or
 * our newer route to another gateway for the same destination is never removed.
 */
export function deleteArgs(config: LinuxConfig, family: Family, dst: string, gateway?: string): string[] {
  const args = [...globalArgs(config, family), 'route', 'del', dst];
  if (gateway !== undefined) args.push('via', gateway);
  args.push('table', config.table, 'proto', String(config.protocol));
  return args;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function normalizeDst(dst: string, family: Family): string {
  if (dst === 'default') return family === 4 ? '0.0.0.0/0' : '::/0';
  if (dst.includes('/')) return dst;
  return `${dst}/${family === 4 ? 32 : 128}`;
}

/** Parses `ip -json route show` output; rejects shapes that are not ip's. */
export function parseRouteJson(stdout: string, family: Family): IpRoute[] {
  const text = stdout.trim();
  // Some iproute2 versions print nothing rather than [] for an empty dump.
  if (text === '') return [];
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new RetryableError(`cannot parse ip -json route output: ${(err as Error).message}`, { cause: err });
  }
  if (!Array.isArray(raw)) throw new RetryableError('cannot parse ip -json route output: not a JSON array');
  const routes: IpRoute[] = [];
  for (const entry of raw) {
    if (!isRecord(entry) || typeof entry.dst !== 'string') {
      throw new RetryableError(
        `cannot parse ip -json route output: entry without dst: ${JSON.stringify(entry)}`,
      );
    }
    const gateways: string[] = [];
    if (typeof entry.gateway === 'string') gateways.push(entry.gateway);
    if (Array.isArray(entry.nexthops)) {
      for (const nh of entry.nexthops) {
        if (isRecord(nh) && typeof nh.gateway === 'string') gateways.push(nh.gateway);
      }
    }
    routes.push({
      dst: normalizeDst(entry.dst, family),
      type: typeof entry.type === 'string' ? entry.type : 'unicast',
      gateways,
      protocol:
        typeof entry.protocol === 'string' || typeof entry.protocol === 'number'
          ? String(entry.protocol)
          : undefined,
      metric: typeof entry.metric === 'number' ? entry.metric : undefined,
    });
  }
  return routes;
}

/** Family of a CIDR (or bare address); undefined if it is neither. */
export function cidrFamily(cidr: string): Family | undefined {
  const slash = cidr.indexOf('/');
  const addr = slash < 0 ? cidr : cidr.slice(0, slash);
  const family: Family | undefined = isIPv4(addr) ? 4 : isIPv6(addr) ? 6 : undefined;
  if (family === undefined || slash < 0) return family;
  const len = cidr.slice(slash + 1);
  if (!/^[0-9]{1,3}$/.test(len) || Number(len) > (family === 4 ? 32 : 128)) return undefined;
  return family;
}

/**
 * Text form used to compare a gateway with node addresses: IPv6 compressed as
 * RFC 5952 (as ip prints it), IPv4 without leading zeros (read as decimal, as
 * Kubernetes does). Undefined for anything that is not an IP address.
 */
export function canonicalIp(addr: string): string | undefined {
  const a = addr.trim();
  if (/^[0-9]{1,3}(\.[0-9]{1,3}){3}$/.test(a)) {
    const parts = a.split('.').map(Number);
    return parts.every((p) => p <= 255) ? parts.join('.') : undefined;
  }
  if (!isIPv6(a)) return undefined;
  // The WHATWG URL host serializer implements RFC 5952 compression.
  return new URL(`http://[${a}]/`).hostname.slice(1, -1);
}

export function ipFamily(addr: string): Family | undefined {
  return isIPv4(addr) ? 4 : isIPv6(addr) ? 6 : undefined;
}

/** Route types that deliver nothing: reported as blackhole (R1). */
export function isUndeliverableType(type: string): boolean {
  return type !== 'unicast';
}

// ESRCH from the kernel: the route to delete is not there (R3). A table that
// was never created holds no route either.
const MISSING_ROUTE = /No such process|FIB table does not exist/i;
const MISSING_TABLE = /FIB table does not exist/i;
// ip -6 on a kernel without IPv6, or with it disabled in this namespace.
const NO_FAMILY = /Address family not supported by protocol/i;

export function isMissingRoute(err: unknown): boolean {
  return err instanceof IpExecError && MISSING_ROUTE.test(err.stderr);
}

export function isEmptyListing(err: unknown): boolean {
  return err instanceof IpExecError && (MISSING_TABLE.test(err.stderr) || NO_FAMILY.test(err.stderr));
}

// Requests that fail the same way until someone changes the node, the router
// or the config; retrying them only fills the logs.
const PERMANENT = [
  /Network is unreachable/i,
  /Nexthop has invalid gateway/i,
  /No route to host/i, // the IPv6 wording of an off-link gateway
  /Invalid prefix for given prefix length/i,
  /is wrong: /i, // ip's argument validation: bad table name, protocol, address
  /IPv6 is disabled/i,
];

function firstLine(text: string): string {
  return (
    text
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l !== '') ?? ''
  );
}

/**
 * Maps a failed `ip` run to SPEC §2.3: unfixable requests → PermanentError,
 * missing privilege → PermanentError with a hint, the rest → RetryableError
 * carrying ip's own explanation.
 */
export function classifyIpError(err: unknown, what: string): Error {
  if (!(err instanceof IpExecError)) {
    return new RetryableError(`${what}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const stderr = err.stderr.trim();
  const detail = stderr === '' ? `exit status ${String(err.code)}` : stderr.split('\n').join('; ');
  const cmd = `ip ${err.args.join(' ')}`;
  if (err.code === 'ENOENT') {
    return new PermanentError(
      `${what}: command not found (${err.message}); install iproute2 or set ipCommand in the cloud config`,
      { cause: err },
    );
  }
  if (err.code === 'EACCES') {
    return new PermanentError(`${what}: cannot run ip command: ${err.message}`, { cause: err });
  }
  if (/Operation not permitted|Permission denied/i.test(stderr)) {
    return new PermanentError(
      `${what}: ${cmd}: ${firstLine(stderr)}; run the controller as root or with CAP_NET_ADMIN ` +
        `(and CAP_SYS_ADMIN to enter a network namespace)`,
      { cause: err },
    );
  }
  if (PERMANENT.some((re) => re.test(stderr))) {
    return new PermanentError(`${what}: ${cmd}: ${detail}`, { cause: err });
  }
  return new RetryableError(`${what}: ${cmd}: ${detail}`, { cause: err });
}
