// cloud-provider-aws's own route code (testenv/aws-upstream: k8s.io/cloud-provider-aws v1.37.1's
// Routes behind a command line) for the aws handover test: each call builds the cloud from the
// CCM's INI cloud.conf, as that CCM does, and runs one ListRoutes or CreateRoute against moto.
import { prerequisite } from './prerequisites.ts';
import type { UpstreamRun } from './upstream-binary.ts';

// AWS_UPSTREAM, else the binary scripts/aws-upstream.sh
// built for the current sources; its tests skip without it, and fail with CI=true.
const AWS_UPSTREAM = prerequisite(
  'AWS_UPSTREAM',
  'aws-upstream.sh',
  'cloud-provider-aws not built: run scripts/aws-upstream.sh build (or set AWS_UPSTREAM)',
);
export const awsUpstreamPath = AWS_UPSTREAM.path;
export const awsUpstreamSkip = AWS_UPSTREAM.skip;

/** A node as upstream's node informer holds it: it maps instances to nodes by providerID only. */
export interface UpstreamNode {
  name: string;
  providerID: string;
}

/** The binary on the CCM's cloud.conf and nodes; moto's test credentials, no IMDS. */
export function awsUpstream(conf: string, nodes: readonly UpstreamNode[]): UpstreamRun {
  const bin = awsUpstreamPath();
  if (bin === undefined) throw new Error('cloud-provider-aws not built: run scripts/aws-upstream.sh build');
  return {
    name: 'aws-upstream',
    bin,
    files: {
      'cloud.conf': { flag: '-cloud-config', text: conf },
      'nodes.json': { flag: '-nodes', text: JSON.stringify(nodes) },
    },
    env: {
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      AWS_EC2_METADATA_DISABLED: 'true',
    },
  };
}
