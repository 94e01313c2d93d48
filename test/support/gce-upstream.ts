// cloud-provider-gcp's own route code (testenv/gce-upstream: k8s.io/cloud-provider-gcp/providers
// v0.28.2's gce Cloud behind a command line) for the gce handover test: each call builds the cloud
// from the CCM's gce.conf, as that CCM does, and runs one ListRoutes or CreateRoute against the GCE
// fake, with the fake as its metadata server.
import { prerequisite } from './prerequisites.ts';
import type { UpstreamRun } from './upstream-binary.ts';

// GCE_UPSTREAM, else the binary scripts/gce-upstream.sh
// built for the current sources; its tests skip without it, and fail with CI=true.
const GCE_UPSTREAM = prerequisite(
  'GCE_UPSTREAM',
  'gce-upstream.sh',
  'cloud-provider-gcp not built: run scripts/gce-upstream.sh build (or set GCE_UPSTREAM)',
);
export const gceUpstreamPath = GCE_UPSTREAM.path;
export const gceUpstreamSkip = GCE_UPSTREAM.skip;

/**
 * The binary on the CCM's gce.conf. `metadataHost` (host:port) stands in for the instance's
 * metadata server: upstream asks it for the local zone and project gce.conf leaves out, and for
 * the token that authenticates its token-url request.
 */
export function gceUpstream(conf: string, metadataHost: string): UpstreamRun {
  const bin = gceUpstreamPath();
  if (bin === undefined) throw new Error('cloud-provider-gcp not built: run scripts/gce-upstream.sh build');
  return {
    name: 'gce-upstream',
    bin,
    files: { 'gce.conf': { flag: '-cloud-config', text: conf } },
    env: { GCE_METADATA_HOST: metadataHost },
  };
}
