// The EC2 instance metadata service, IMDSv2 (a session token from PUT /latest/api/token on
// every read), for what cloud-provider-aws takes from it when the cloud config has none
// (R121): the region and the instance's ID. The endpoint follows the SDKs' variables:
// AWS_EC2_METADATA_SERVICE_ENDPOINT (default http://169.254.169.254), and
// AWS_EC2_METADATA_DISABLED=true turns it off.
import { httpFetch, type FetchLike } from '../../platform/http-fetch.ts';

export class ImdsError extends Error {
  override readonly name: string = 'ImdsError';
}

const DEFAULT_ENDPOINT = 'http://169.254.169.254';
/** Off EC2 the link-local address does not answer: fail fast instead of at the socket timeout. */
const TIMEOUT_MS = 3_000;

export interface Imds {
  /** The instance identity document's region (upstream: imds.GetRegion). */
  region(): Promise<string>;
  /** meta-data/instance-id. */
  instanceId(): Promise<string>;
}

export function instanceMetadata(
  env: Readonly<Record<string, string | undefined>> = process.env,
  fetch: FetchLike = httpFetch(TIMEOUT_MS),
): Imds {
  const endpoint = (env.AWS_EC2_METADATA_SERVICE_ENDPOINT || DEFAULT_ENDPOINT).replace(/\/+$/, '');
  const disabled = (env.AWS_EC2_METADATA_DISABLED ?? '').toLowerCase() === 'true';

  async function call(method: string, path: string, headers: Record<string, string>): Promise<string> {
    const what = `instance metadata ${method} ${endpoint}${path}`;
    let res;
    try {
      res = await fetch(`${endpoint}${path}`, { method, headers, signal: AbortSignal.timeout(TIMEOUT_MS) });
    } catch (err) {
      throw new ImdsError(`${what}: ${(err as Error).message}`, { cause: err });
    }
    const body = await res.text();
    if (!res.ok) throw new ImdsError(`${what}: HTTP ${res.status} ${res.statusText}`);
    return body;
  }

  async function get(path: string): Promise<string> {
    if (disabled) throw new ImdsError('instance metadata is disabled (AWS_EC2_METADATA_DISABLED=true)');
    const token = await call('PUT', '/latest/api/token', { 'x-aws-ec2-metadata-token-ttl-seconds': '21600' });
    return call('GET', path, { 'x-aws-ec2-metadata-token': token });
  }

  return {
    async region() {
      const text = await get('/latest/dynamic/instance-identity/document');
      let region: unknown;
      try {
        region = (JSON.parse(text) as { region?: unknown }).region;
      } catch {
        throw new ImdsError('instance metadata: the instance identity document is not JSON');
      }
      if (typeof region !== 'string' || region === '') {
        throw new ImdsError('instance metadata: the instance identity document has no region');
      }
      return region;
    },
    async instanceId() {
      const id = (await get('/latest/meta-data/instance-id')).trim();
      if (id === '') throw new ImdsError('instance metadata: empty instance-id');
      return id;
    },
  };
}
