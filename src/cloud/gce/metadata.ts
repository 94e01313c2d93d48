// The Compute Engine metadata server, for what cloud-provider-gcp takes from it when gce.conf
// has none (R122; providers/gce/gce.go generateCloudConfig): the project ID, the network of the
// instance's first interface, and its zone. Host: GCE_METADATA_HOST, as Google's metadata client
// reads it, else metadata.google.internal.
import { httpFetch, type FetchLike } from '../../platform/http-fetch.ts';
import { globalValues } from './config.ts';

/** Values from the metadata server that stand in for gce.conf keys it lacks. */
export interface GceMetadataValues {
  readonly projectID?: string;
  readonly networkName?: string;
  readonly zone?: string;
}

const TIMEOUT_MS = 3_000;

/** The last path segment of a metadata answer such as `projects/123/networks/default`. */
function lastSegment(value: string, parts: number): string | undefined {
  const segments = value.trim().split('/');
  // Upstream's getNetworkNameViaMetadata wants exactly projects/<n>/networks/<name>.
  return segments.length === parts ? segments[parts - 1] : undefined;
}

/**
 * Asks the metadata server only for the keys gce.conf lacks (project-id, network-name,
 * local-zone). An unreachable server leaves them missing; parsing then names them.
 */
export async function gceMetadataFor(
  configText: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
  fetch: FetchLike = httpFetch(TIMEOUT_MS),
): Promise<GceMetadataValues> {
  let values: Map<string, string[]>;
  try {
    values = globalValues(configText);
  } catch {
    return {}; // The parse reports the syntax error.
  }
  const has = (key: string): boolean => (values.get(key) ?? []).some((v) => v !== '');
  const host = env.GCE_METADATA_HOST || 'metadata.google.internal';
  const get = async (path: string): Promise<string | undefined> => {
    try {
      const res = await fetch(`http://${host}/computeMetadata/v1/${path}`, {
        headers: { 'Metadata-Flavor': 'Google' },
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      const body = await res.text();
      return res.ok && body.trim() !== '' ? body.trim() : undefined;
    } catch {
      return undefined;
    }
  };
  const out: { projectID?: string; networkName?: string; zone?: string } = {};
  if (!has('project-id')) {
    const v = await get('project/project-id');
    if (v !== undefined) out.projectID = v;
  }
  if (!has('network-name')) {
    const v = await get('instance/network-interfaces/0/network');
    const name = v === undefined ? undefined : lastSegment(v, 4);
    if (name !== undefined) out.networkName = name;
  }
  if (!has('local-zone')) {
    const v = await get('instance/zone');
    const zone = v === undefined ? undefined : lastSegment(v, 4);
    if (zone !== undefined) out.zone = zone;
  }
  return out;
}
