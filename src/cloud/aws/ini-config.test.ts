// R121: cloud-provider-aws's INI cloud config read as that CCM reads it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startImdsStandIn, type ImdsStandIn } from '../../../test/support/imds-stand-in.ts';
import { AwsConfigError, parseAwsCloudConfig } from './config.ts';
import { instanceMetadata } from './imds.ts';
import { azToRegion, ec2Override, looksLikeIni, parseAwsIniConfig } from './ini-config.ts';
import { clusterIDFromTags, upstreamClientConfig, upstreamRegion } from './upstream.ts';

/** Every [Global] key of v1.37.1's CloudConfig and two overrides, as a kops cluster writes them. */
const FULL = `
; written for cloud-provider-aws
[Global]
Zone = us-west-2b
Region = us-west-2
VPC = vpc-0123456789abcdef0
SubnetID = subnet-0123456789abcdef0
RouteTableID = rtb-0123456789abcdef0
RoleARN = arn:aws:iam::123456789012:role/ccm
SourceARN = arn:aws:eks:us-west-2:123456789012:cluster/prod
KubernetesClusterTag = prod
KubernetesClusterID = prod
DisableSecurityGroupIngress = true
ElbSecurityGroup = sg-0123
NodeIPFamilies = ipv4
NodeIPFamilies = ipv6
ClusterServiceLoadBalancerHealthProbeMode = Shared
NLBSecurityGroupMode = Managed
SomeFutureKey = whatever

[ServiceOverride "1"]
Service = s3
Region = us-west-2
URL = https://s3.foo.bar
SigningRegion = signing_region
SigningMethod = signing_method

[ServiceOverride "2"]
Service = EC2
Region = us-west-2
URL = https://ec2.example.internal
SigningRegion = us-west-2
SigningMethod = v4
SigningName = ec2

[UnknownSection]
Foo = bar
`;

describe('R121 aws INI cloud config', () => {
  test('detects INI by its first section; YAML and JSON stay YAML', () => {
    assert.equal(looksLikeIni(FULL), true);
    assert.equal(looksLikeIni('# c\n\n[global]\nregion=x'), true);
    assert.equal(looksLikeIni('region: us-east-1\n'), false);
    assert.equal(looksLikeIni('{"region": "us-east-1"}'), false);
    assert.equal(looksLikeIni(''), false);
  });

  test('every route-relevant key is read; the others and unknown sections are ignored', () => {
    const ini = parseAwsIniConfig(FULL);
    assert.equal(ini.zone, 'us-west-2b');
    assert.equal(ini.region, 'us-west-2');
    assert.equal(ini.vpc, 'vpc-0123456789abcdef0');
    assert.equal(ini.routeTableId, 'rtb-0123456789abcdef0');
    assert.equal(ini.roleARN, 'arn:aws:iam::123456789012:role/ccm');
    assert.equal(ini.sourceARN, 'arn:aws:eks:us-west-2:123456789012:cluster/prod');
    assert.equal(ini.legacyClusterTag, 'prod');
    assert.equal(ini.clusterID, 'prod');
    assert.deepEqual(
      ini.serviceOverrides.map((o) => [o.key, o.service, o.region, o.url]),
      [
        ['1', 's3', 'us-west-2', 'https://s3.foo.bar'],
        ['2', 'EC2', 'us-west-2', 'https://ec2.example.internal'],
      ],
    );
    const config = parseAwsCloudConfig(FULL);
    assert.equal(config.routeTableId, 'rtb-0123456789abcdef0');
    assert.equal(config.vpcId, undefined, "upstream's route table lookup has no VPC filter");
    assert.equal(config.disableSrcDstCheck, true);
  });

  test('names are case-insensitive, values unquoted, empty values absent, last value wins', () => {
    const ini = parseAwsIniConfig('[global]\nregion = "eu-west-1"\nREGION = eu-central-1\nroutetableid =\n');
    assert.equal(ini.region, 'eu-central-1');
    assert.equal(ini.routeTableId, undefined);
    assert.deepEqual(parseAwsIniConfig('[Global]\n'), { serviceOverrides: [] });
  });

  test("ValidateOverrides' checks and messages", () => {
    const bad: [string, RegExp][] = [
      [
        '[ServiceOverride "1"]\nRegion=r\nURL=u\nSigningRegion=s',
        /service name is missing \[Service is ""\] in override 1/,
      ],
      ['[ServiceOverride "1"]\nService="s3      "\nURL=u\nSigningRegion=s', /service region is missing/],
      [
        '[ServiceOverride "1"]\nService=s3\nRegion=r\nSigningRegion=s',
        /url is missing \[URL is ""\] in override 1/,
      ],
      ['[ServiceOverride "1"]\nService=s3\nRegion=r\nURL=u', /signingRegion is missing/],
      [
        '[ServiceOverride "1"]\nService=s3\nRegion=r\nURL=u\nSigningRegion=s\n[ServiceOverride "2"]\nService=s3\nRegion=r\nURL=v\nSigningRegion=s',
        /duplicate entry found for service override \[2\] \(s3 in r\)/,
      ],
      [
        '[Global]\nKubernetesClusterTag = a\nKubernetesClusterID = b',
        /clusterID tags did not match: "b" vs "a"/,
      ],
      ['[Global]\nRegion = "unterminated', /unterminated quote/],
    ];
    for (const [text, message] of bad) {
      assert.throws(
        () => parseAwsCloudConfig(text),
        (err: unknown) => err instanceof AwsConfigError && message.test(err.message),
        text,
      );
    }
  });

  test('the EC2 override is the one for Service EC2 in the client region, case-sensitive as upstream', () => {
    const { serviceOverrides } = parseAwsIniConfig(FULL);
    assert.equal(ec2Override(serviceOverrides, 'us-west-2')?.url, 'https://ec2.example.internal');
    assert.equal(ec2Override(serviceOverrides, 'eu-west-1'), undefined);
    const lower = parseAwsIniConfig(
      '[ServiceOverride "x"]\nService=ec2\nRegion=us-west-2\nURL=https://e\nSigningRegion=us-west-2',
    );
    assert.equal(ec2Override(lower.serviceOverrides, 'us-west-2'), undefined);
    const client = upstreamClientConfig({ ...parseAwsIniConfig(FULL), roleARN: undefined }, 'us-west-2');
    assert.equal(client.endpoint, 'https://ec2.example.internal');
    assert.equal(client.signingRegion, 'us-west-2');
    assert.equal(client.credentials, undefined);
  });

  test('azToRegion', () => {
    assert.equal(azToRegion('us-west-2b'), 'us-west-2');
    assert.equal(azToRegion('us-gov-west-1a'), 'us-gov-west-1');
    assert.throws(() => azToRegion(''), /invalid \(empty\) AZ/);
    assert.throws(() => azToRegion('nowhere'), /invalid AZ: nowhere/);
  });

  test('cluster ID from instance tags: legacy wins, conflicts and absence fail', () => {
    assert.equal(clusterIDFromTags([{ Key: 'kubernetes.io/cluster/prod', Value: 'owned' }]), 'prod');
    assert.equal(clusterIDFromTags([{ Key: 'KubernetesCluster', Value: 'old' }]), 'old');
    assert.equal(
      clusterIDFromTags([
        { Key: 'KubernetesCluster', Value: 'prod' },
        { Key: 'kubernetes.io/cluster/prod', Value: 'shared' },
      ]),
      'prod',
    );
    assert.throws(
      () =>
        clusterIDFromTags([
          { Key: 'KubernetesCluster', Value: 'a' },
          { Key: 'kubernetes.io/cluster/b', Value: 'owned' },
        ]),
      /clusterID tags did not match/,
    );
    assert.throws(
      () =>
        clusterIDFromTags([
          { Key: 'kubernetes.io/cluster/a', Value: 'owned' },
          { Key: 'kubernetes.io/cluster/b', Value: 'owned' },
        ]),
      /Found multiple cluster tags/,
    );
    assert.throws(() => clusterIDFromTags([{ Key: 'Name', Value: 'x' }]), /failed to find ClusterID/);
  });
});

describe('R121 region: Zone, then Region, then instance metadata (IMDSv2)', () => {
  let standIn: ImdsStandIn;
  before(async () => {
    standIn = await startImdsStandIn({ region: 'ap-northeast-3', instanceId: 'i-0123456789abcdef0' });
  });
  after(() => standIn.close());

  test('from the metadata stand-in when the file has neither, with a session token', async () => {
    const imds = instanceMetadata({ AWS_EC2_METADATA_SERVICE_ENDPOINT: standIn.endpoint });
    assert.equal(await upstreamRegion(parseAwsIniConfig('[Global]\n'), imds), 'ap-northeast-3');
    assert.equal(await imds.instanceId(), 'i-0123456789abcdef0');
    assert.ok((standIn.hits.get('PUT /latest/api/token') ?? 0) >= 2, 'a token before each read');
  });

  test('Zone wins over Region, Region over metadata; neither asks metadata', async () => {
    const before = standIn.hits.get('PUT /latest/api/token') ?? 0;
    const imds = instanceMetadata({ AWS_EC2_METADATA_SERVICE_ENDPOINT: standIn.endpoint });
    assert.equal(
      await upstreamRegion(parseAwsIniConfig('[Global]\nZone=eu-west-3c\nRegion=us-east-1'), imds),
      'eu-west-3',
    );
    assert.equal(await upstreamRegion(parseAwsIniConfig('[Global]\nRegion=us-east-1'), imds), 'us-east-1');
    assert.equal(standIn.hits.get('PUT /latest/api/token') ?? 0, before);
  });

  test('no region and no metadata: a clear start-up error', async () => {
    const imds = instanceMetadata({ AWS_EC2_METADATA_DISABLED: 'true' });
    await assert.rejects(
      upstreamRegion(parseAwsIniConfig('[Global]\n'), imds),
      /no Region or Zone in the cloud config's \[Global\] and no region from instance metadata: instance metadata is disabled/,
    );
  });
});
