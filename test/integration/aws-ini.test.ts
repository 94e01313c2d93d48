// R121: an INI cloud.conf written for cloud-provider-aws starts the aws plug-in against moto
// and selects the route table that CCM selects (k8s.io/cloud-provider-aws v1.37.1
// aws_routes.go findRouteTable): by RouteTableID, else by the cluster ID's tag, the legacy
// KubernetesCluster tag too; region and cluster ID from a metadata stand-in when absent.
// Run: scripts/moto.sh && node --test test/integration/aws-ini.test.ts
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CreateRouteCommand, CreateTagsCommand, EC2Client } from '@aws-sdk/client-ec2';
import { awsProviderFactory } from '../../src/cloud/aws/index.ts';
import type { CallOptions, NodeLister, Route } from '../../src/core/types.ts';
import { createTable, createVpc, nodesFor, runInstances } from '../support/ec2-fixture.ts';
import { startImdsStandIn, type ImdsStandIn } from '../support/imds-stand-in.ts';
import { motoSkip, startMoto, type Moto } from '../support/moto.ts';

const REGION = 'us-east-1';
const CLUSTER_ID = 'ini-cluster';
const LEGACY_ID = 'kops-legacy';

let moto: Moto;
let ec2: EC2Client;
let imds: ImdsStandIn;
let savedEnv: NodeJS.ProcessEnv;
let nodes: NodeLister;
/** The cluster-tagged table (the CCM's), a second untagged one, a legacy-tagged one, another cluster's. */
const tables = { tagged: '', untagged: '', legacy: '', other: '' };

function opts(): CallOptions {
  return { signal: new AbortController().signal, reconcile: { id: 'r', scratch: new Map() } };
}

/** The override cloud-provider-aws users write for a private EC2 endpoint; here moto. */
function override(): string {
  return `[ServiceOverride "ec2"]\nService = EC2\nRegion = ${REGION}\nURL = ${moto.endpoint}\nSigningRegion = ${REGION}\n`;
}

async function routesVia(config: string, clusterName = 'kubernetes'): Promise<string[]> {
  const cloud = await awsProviderFactory(config, nodes);
  const routes: Route[] = await cloud.routes()!.listRoutes(clusterName, opts());
  return routes.map((r) => `${r.destinationCIDR}>${r.targetNode}`).sort();
}

describe('aws plug-in with a cloud-provider-aws INI config, against moto', motoSkip(), () => {
  before(async () => {
    savedEnv = { ...process.env };
    moto = await startMoto();
    process.env.AWS_ACCESS_KEY_ID = 'testing';
    process.env.AWS_SECRET_ACCESS_KEY = 'testing';
    process.env.AWS_CONFIG_FILE = '/nonexistent/aws-config';
    process.env.AWS_SHARED_CREDENTIALS_FILE = '/nonexistent/aws-credentials';
    delete process.env.AWS_REGION;
    delete process.env.AWS_DEFAULT_REGION;
    delete process.env.AWS_EC2_METADATA_DISABLED;
    ec2 = new EC2Client({
      endpoint: moto.endpoint,
      region: REGION,
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    });
    const { vpcId, subnetId } = await createVpc(ec2);
    tables.tagged = await createTable(ec2, vpcId, CLUSTER_ID, 'owned');
    tables.untagged = await createTable(ec2, vpcId, undefined);
    tables.other = await createTable(ec2, vpcId, 'another-cluster', 'owned');
    tables.legacy = await createTable(ec2, vpcId, undefined);
    await ec2.send(
      new CreateTagsCommand({
        Resources: [tables.legacy],
        Tags: [{ Key: 'KubernetesCluster', Value: LEGACY_ID }],
      }),
    );
    const instances = await runInstances(ec2, subnetId, 3);
    // The instance the controller "runs on" carries the cluster tag, as cloud-provider-aws requires.
    await ec2.send(
      new CreateTagsCommand({
        Resources: [instances[0]!.id],
        Tags: [{ Key: `kubernetes.io/cluster/${CLUSTER_ID}`, Value: 'owned' }],
      }),
    );
    nodes = {
      get: (name) => nodesFor({ instances }).find((n) => n.metadata?.name === name),
      list: () => nodesFor({ instances }),
    };
    // Each table gets a distinct route (as that CCM writes them: instance target, pod CIDR).
    const seed: [string, number, string][] = [
      [tables.tagged, 0, '10.244.0.0/24'],
      [tables.untagged, 1, '10.244.1.0/24'],
      [tables.legacy, 2, '10.244.2.0/24'],
      [tables.other, 1, '10.244.9.0/24'],
    ];
    for (const [table, i, cidr] of seed) {
      await ec2.send(
        new CreateRouteCommand({
          RouteTableId: table,
          DestinationCidrBlock: cidr,
          InstanceId: instances[i]!.id,
        }),
      );
    }
    imds = await startImdsStandIn({ region: REGION, instanceId: instances[0]!.id });
    process.env.AWS_EC2_METADATA_SERVICE_ENDPOINT = imds.endpoint;
  });
  after(async () => {
    process.env = savedEnv;
    ec2?.destroy();
    await imds?.close();
    await moto?.stop();
  });

  test('KubernetesClusterID selects the table tagged with it, whatever --cluster-name says', async () => {
    const conf = `[Global]\nRegion = ${REGION}\nKubernetesClusterID = ${CLUSTER_ID}\n${override()}`;
    assert.deepEqual(await routesVia(conf, 'some-other-name'), ['10.244.0.0/24>node-0']);
  });

  test('RouteTableID selects that table, tagged or not', async () => {
    const conf = `[Global]\nRegion = ${REGION}\nRouteTableID = ${tables.untagged}\nKubernetesClusterID = ${CLUSTER_ID}\n${override()}`;
    assert.deepEqual(await routesVia(conf), ['10.244.1.0/24>node-1']);
  });

  test('without Region and cluster ID: region and instance from metadata, cluster ID from its tags', async () => {
    const before = imds.hits.get('GET /latest/dynamic/instance-identity/document') ?? 0;
    const conf = `[Global]\nVPC = vpc-0123456789abcdef0\nSubnetID = subnet-1\n${override()}`;
    assert.deepEqual(await routesVia(conf), ['10.244.0.0/24>node-0']);
    assert.equal(imds.hits.get('GET /latest/dynamic/instance-identity/document'), before + 1);
    assert.ok((imds.hits.get('GET /latest/meta-data/instance-id') ?? 0) >= 1);
  });

  test('the legacy KubernetesCluster tag selects its table', async () => {
    const conf = `[Global]\nRegion = ${REGION}\nKubernetesClusterTag = ${LEGACY_ID}\n${override()}`;
    assert.deepEqual(await routesVia(conf), ['10.244.2.0/24>node-2']);
  });

  test('the YAML config falls back to the legacy tag for --cluster-name', async () => {
    const conf = `region: ${REGION}\nendpoint: ${moto.endpoint}\n`;
    assert.deepEqual(await routesVia(conf, LEGACY_ID), ['10.244.2.0/24>node-2']);
    assert.deepEqual(await routesVia(conf, CLUSTER_ID), ['10.244.0.0/24>node-0']);
  });

  test('RoleARN: EC2 calls use the credentials of STS AssumeRole', async () => {
    process.env.AWS_ENDPOINT_URL_STS = moto.endpoint;
    try {
      const conf = `[Global]\nRegion = ${REGION}\nRoleARN = arn:aws:iam::123456789012:role/ccm\nSourceARN = arn:aws:eks:${REGION}:123456789012:cluster/x\nKubernetesClusterID = ${CLUSTER_ID}\n${override()}`;
      assert.deepEqual(await routesVia(conf), ['10.244.0.0/24>node-0']);
    } finally {
      delete process.env.AWS_ENDPOINT_URL_STS;
    }
  });

  test('no table with the cluster tag: a permanent error naming both tags', async () => {
    const conf = `[Global]\nRegion = ${REGION}\nKubernetesClusterID = nobody\n${override()}`;
    const cloud = await awsProviderFactory(conf, nodes);
    await assert.rejects(cloud.routes()!.listRoutes('kubernetes', opts()), {
      message:
        /unable to find route table tagged kubernetes\.io\/cluster\/nobody or KubernetesCluster=nobody/,
    });
  });
});
