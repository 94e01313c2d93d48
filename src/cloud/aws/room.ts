// R115, R118: the room of the VPC route table that holds the cluster's routes. EC2 counts the
// table's non-propagated routes (the local route, gateways, peerings, every cluster's) against
// the "Routes per route table" quota (Service Quotas vpc/L-93826ACB, default 50). The limit is
// the cloud config's routeTableLimit if set, else the quota as Service Quotas reports it (read
// at most once per QUOTA_REFRESH_MS, a signed GetServiceQuota with the EC2 client's
// credentials), else the documented default when that read fails (e.g. no
// servicequotas:GetServiceQuota permission).
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { errorMessage } from '../../core/errors.ts';
import type { RouteTableRoom } from '../../core/types.ts';
import { httpFetch, type FetchLike } from '../../platform/http-fetch.ts';
import { SignatureV4, type EC2Client, type RouteTable } from './ec2.ts';

export const AWS_DEFAULT_ROUTE_LIMIT = 50;
/** Service Quotas' code of "Routes per route table" (service vpc). */
export const ROUTES_PER_TABLE_QUOTA = 'L-93826ACB';
export const QUOTA_REFRESH_MS = 60 * 60_000;

/** The table as listRoutes read it: its ID and the routes that count against the quota. */
export class ListedTable {
  static readonly key = 'aws/listed-table';
  readonly id: string;
  readonly count: number;
  constructor(id: string, routes: RouteTable['Routes']) {
    this.id = id;
    // Routes a virtual private gateway propagates do not count against the quota.
    this.count = (routes ?? []).filter((r) => r.Origin !== 'EnableVgwRoutePropagation').length;
  }
}

interface LimitRead {
  readonly limit: number;
  /** How the limit was found, for the room's `raise` text. */
  readonly note: string;
  readonly at: number;
}

export interface RouteLimitOptions {
  readonly client: EC2Client;
  /** The config's routeTableLimit: no quota read at all. */
  readonly configured?: number;
  /** The config's endpoint (an emulator serves Service Quotas there too). */
  readonly endpoint?: string;
  readonly fetch?: FetchLike;
  readonly now?: () => number;
}

export class RouteTableLimit {
  private readonly opts: RouteLimitOptions;
  private last: LimitRead | undefined;

  constructor(opts: RouteLimitOptions) {
    this.opts = opts;
  }

  async room(table: ListedTable, signal: AbortSignal): Promise<RouteTableRoom> {
    const { limit, note } = await this.limit(signal);
    return {
      container: `route table ${table.id}`,
      limit,
      used: table.count,
      raise:
        `request an increase of the "Routes per route table" quota (Service Quotas, vpc ${ROUTES_PER_TABLE_QUOTA}) ` +
        `and set routeTableLimit in the cloud config if Service Quotas cannot be read; ${note}`,
    };
  }

  private async limit(signal: AbortSignal): Promise<LimitRead> {
    const now = (this.opts.now ?? Date.now)();
    if (this.opts.configured !== undefined)
      return {
        limit: this.opts.configured,
        note: 'the limit is routeTableLimit from the cloud config',
        at: now,
      };
    if (this.last !== undefined && now - this.last.at < QUOTA_REFRESH_MS) return this.last;
    try {
      const value = await getRoutesPerTableQuota(this.opts, signal);
      this.last = { limit: value, note: 'the limit is the quota Service Quotas reports', at: now };
    } catch (err) {
      if (signal.aborted) throw err;
      // Not asked again before the refresh: a missing permission would fail every list.
      this.last = {
        limit: AWS_DEFAULT_ROUTE_LIMIT,
        note: `the limit is EC2's default of ${AWS_DEFAULT_ROUTE_LIMIT} (Service Quotas: ${errorMessage(err)})`,
        at: now,
      };
    }
    return this.last;
  }
}

/** GetServiceQuota(vpc, L-93826ACB), signed like the SDK signs it. */
async function getRoutesPerTableQuota(opts: RouteLimitOptions, signal: AbortSignal): Promise<number> {
  const region = await opts.client.config.region();
  const credentials = await opts.client.config.credentials();
  const url = new URL(opts.endpoint ?? `https://servicequotas.${region}.amazonaws.com/`);
  const body = JSON.stringify({ ServiceCode: 'vpc', QuotaCode: ROUTES_PER_TABLE_QUOTA });
  const signer = new SignatureV4({ credentials, region, service: 'servicequotas', sha256: Sha256 });
  const signed = await signer.sign({
    method: 'POST',
    protocol: url.protocol,
    hostname: url.hostname,
    ...(url.port !== '' ? { port: Number(url.port) } : {}),
    path: url.pathname,
    query: {},
    headers: {
      host: url.host,
      'content-type': 'application/x-amz-json-1.1',
      'x-amz-target': 'ServiceQuotasV20190624.GetServiceQuota',
    },
    body,
  });
  const fetch = opts.fetch ?? httpFetch();
  const res = await fetch(url.href, { method: 'POST', headers: signed.headers, body, signal });
  const text = await res.text();
  if (!res.ok) throw new Error(`GetServiceQuota answered HTTP ${res.status}: ${text.slice(0, 200)}`);
  const value = (JSON.parse(text) as { Quota?: { Value?: unknown } }).Quota?.Value;
  if (typeof value !== 'number' || !(value > 0))
    throw new Error(`GetServiceQuota gave no value: ${text.slice(0, 200)}`);
  return value;
}

/** node:crypto as the signer's hash (SHA-256, or HMAC-SHA-256 with a secret). */
class Sha256 {
  private readonly h: Hash | Hmac;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.h =
      secret === undefined
        ? createHash('sha256')
        : createHmac('sha256', typeof secret === 'string' ? secret : bytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.h.update(typeof data === 'string' ? data : bytes(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.h.digest()));
  }
  reset(): void {}
}

function bytes(d: ArrayBuffer | ArrayBufferView): Buffer {
  return ArrayBuffer.isView(d) ? Buffer.from(d.buffer, d.byteOffset, d.byteLength) : Buffer.from(d);
}
