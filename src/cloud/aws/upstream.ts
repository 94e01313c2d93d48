// What an INI (cloud-provider-aws) config needs at start beyond parsing (R121), as that
// CCM does it (k8s.io/cloud-provider-aws v1.37.1): the region (Zone, Region, else instance
// metadata), the EC2 endpoint override, the assumed role, and the cluster ID (the config's,
// else the tags of the instance the controller runs on).
import { DescribeInstancesCommand, EC2Client, loadSts, type EC2ClientConfig, type Tag } from './ec2.ts';
import type { Imds } from './imds.ts';
import { azToRegion, ec2Override, type AwsIniSettings } from './ini-config.ts';
import { CLUSTER_TAG_PREFIX, LEGACY_CLUSTER_TAG } from './route-table.ts';

interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
  readonly expiration?: Date;
}
type CredentialsProvider = () => Promise<AwsCredentials>;

export class AwsStartError extends Error {
  override readonly name: string = 'AwsStartError';
}

/** upstream getRegionFromMetadata: Zone wins (backwards compatibility), then Region, then IMDS. */
export async function upstreamRegion(ini: AwsIniSettings, imds: Imds): Promise<string> {
  if (ini.zone !== undefined) return azToRegion(ini.zone);
  if (ini.region !== undefined) return ini.region;
  try {
    return await imds.region();
  } catch (err) {
    throw new AwsStartError(
      `no Region or Zone in the cloud config's [Global] and no region from instance metadata: ${(err as Error).message}`,
      { cause: err },
    );
  }
}

/**
 * Credentials from STS AssumeRole for RoleARN, as upstream's NewStsClient: the STS client in
 * the CCM's region on the default chain, `x-amz-source-account` (the role's account) and,
 * with SourceARN, `x-amz-source-arn` on each call (the confused-deputy condition keys).
 */
export function assumeRoleCredentials(
  region: string,
  roleARN: string,
  sourceARN: string | undefined,
): CredentialsProvider {
  const account = /^arn:[^:]+:iam::(\d{12}):/.exec(roleARN)?.[1];
  if (account === undefined)
    throw new AwsStartError(`RoleARN ${JSON.stringify(roleARN)} is not an IAM role ARN`);
  const headers: Record<string, string> = { 'x-amz-source-account': account };
  if (sourceARN !== undefined) headers['x-amz-source-arn'] = sourceARN;
  let cached: { value: AwsCredentials; refreshAt: number } | undefined;
  return async () => {
    if (cached && Date.now() < cached.refreshAt) return cached.value;
    const { STSClient, AssumeRoleCommand } = await loadSts();
    // STS's own credentials: the SDK's default chain, as an EC2 client without any resolves it.
    const chain = new EC2Client({ region });
    const sts = new STSClient({ region, credentials: chain.config.credentials });
    sts.middlewareStack.add(
      (next) => (args) => {
        const request = args.request as { headers?: Record<string, string> };
        if (request.headers) Object.assign(request.headers, headers);
        return next(args);
      },
      { step: 'build', name: 'stsSourceHeaders' },
    );
    try {
      const out = await sts.send(
        new AssumeRoleCommand({ RoleArn: roleARN, RoleSessionName: `cloud-route-controller-${Date.now()}` }),
      );
      const c = out.Credentials;
      if (!c?.AccessKeyId || !c.SecretAccessKey)
        throw new AwsStartError(`AssumeRole ${roleARN}: no credentials`);
      const expiration = c.Expiration ? new Date(c.Expiration) : undefined;
      const value: AwsCredentials = {
        accessKeyId: c.AccessKeyId,
        secretAccessKey: c.SecretAccessKey,
        ...(c.SessionToken ? { sessionToken: c.SessionToken } : {}),
        ...(expiration ? { expiration } : {}),
      };
      // Renewed five minutes before it expires, as the SDKs' role providers do.
      cached = { value, refreshAt: (expiration?.getTime() ?? Date.now() + 900_000) - 300_000 };
      return value;
    } finally {
      sts.destroy();
      chain.destroy();
    }
  };
}

/** The EC2 client config for the region: the EC2 service override and the role, if any. */
export function upstreamClientConfig(ini: AwsIniSettings, region: string): EC2ClientConfig {
  const override = ec2Override(ini.serviceOverrides, region);
  if (override?.signingName && override.signingName !== 'ec2') {
    throw new AwsStartError(
      `[ServiceOverride "${override.key}"] SigningName ${JSON.stringify(override.signingName)}: only ec2 (EC2's own signing name) is supported`,
    );
  }
  return {
    maxAttempts: 1,
    region,
    ...(override ? { endpoint: override.url, signingRegion: override.signingRegion } : {}),
    ...(ini.roleARN ? { credentials: assumeRoleCredentials(region, ini.roleARN, ini.sourceARN) } : {}),
  };
}

/** upstream findClusterIDs + awsTagging.init: the legacy tag wins; two different IDs fail. */
export function clusterIDFromTags(tags: readonly Tag[]): string {
  let legacy = '';
  let current = '';
  for (const t of tags) {
    const key = t.Key ?? '';
    if (key.startsWith(CLUSTER_TAG_PREFIX)) {
      const id = key.slice(CLUSTER_TAG_PREFIX.length);
      if (current !== '') {
        throw new AwsStartError(
          `Found multiple cluster tags with prefix ${CLUSTER_TAG_PREFIX} ("${current}" and "${id}")`,
        );
      }
      current = id;
    }
    if (key === LEGACY_CLUSTER_TAG) {
      if (legacy !== '') {
        throw new AwsStartError(
          `Found multiple ${LEGACY_CLUSTER_TAG} tags ("${legacy}" and "${t.Value ?? ''}")`,
        );
      }
      legacy = t.Value ?? '';
    }
  }
  if (legacy !== '' && current !== '' && legacy !== current) {
    throw new AwsStartError(`clusterID tags did not match: "${current}" vs "${legacy}"`);
  }
  const id = legacy || current;
  if (id === '') throw new AwsStartError('AWS cloud failed to find ClusterID');
  return id;
}

/**
 * The cluster ID: KubernetesClusterTag, else KubernetesClusterID, else (upstream's
 * initFromTags) the cluster tags of the instance this runs on, found through instance metadata.
 */
export async function upstreamClusterID(ini: AwsIniSettings, client: EC2Client, imds: Imds): Promise<string> {
  const configured = ini.legacyClusterTag ?? ini.clusterID;
  if (configured !== undefined) return configured;
  let instanceId: string;
  try {
    instanceId = await imds.instanceId();
  } catch (err) {
    throw new AwsStartError(
      `no KubernetesClusterID or KubernetesClusterTag in the cloud config and no instance ID from instance metadata to read the cluster tag from: ${(err as Error).message}`,
      { cause: err },
    );
  }
  const out = await client.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }));
  const instance = out.Reservations?.flatMap((r) => r.Instances ?? []).find(
    (i) => i.InstanceId === instanceId,
  );
  if (instance === undefined) throw new AwsStartError(`DescribeInstances ${instanceId}: instance not found`);
  return clusterIDFromTags(instance.Tags ?? []);
}
