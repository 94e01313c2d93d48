// Handover from cloud-provider-aws's route controller, and rollback to it, against moto, with
// that CCM's own route code (k8s.io/cloud-provider-aws v1.37.1, built by scripts/aws-upstream.sh
// from testenv/aws-upstream) reading the same INI cloud.conf the controller is given.
// Handover: upstream's CreateRoute writes the table and the nodes carry the condition its route
// controller leaves; the controller, started with that CCM's cloud.conf and command line, writes
// no route and patches no condition. Rollback: upstream's ListRoutes reads back the routes the
// controller wrote for new nodes, finds each IPv4 one as its own with the right target node, and
// none of the IPv6 ones (its hazard: it skips routes without DestinationCidrBlock,
// docs/migration.md).
// Run: scripts/moto.sh && scripts/aws-upstream.sh build &&
//      node --test test/integration/aws-handover.test.ts
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DescribeInstanceAttributeCommand, DescribeRouteTablesCommand, EC2Client } from '@aws-sdk/client-ec2';
import type { Route as Ec2Route } from '@aws-sdk/client-ec2';
import { awsProviderFactory } from '../../src/cloud/aws/index.ts';
import { MemoryCluster, type NodeSpecInput } from '../../src/cluster/memory-cluster.ts';
import type { RouteController } from '../../src/controller/route-controller.ts';
import { RealClock } from '../../src/core/clock.ts';
import { awsUpstream, awsUpstreamSkip, type UpstreamNode } from '../support/aws-upstream.ts';
import { reconcileNow } from '../support/cluster-controller.ts';
import { addNode, ccmFlags, counting, handoverController } from '../support/handover.ts';
import { upstreamCreate, upstreamList } from '../support/upstream-binary.ts';
import { createTable, createVpc, runInstances, ZONE } from '../support/ec2-fixture.ts';
import { motoSkip, startMoto, type Moto } from '../support/moto.ts';

const REGION = 'us-east-1';
const CLUSTER_ID = 'prod';

let moto: Moto;
let ec2: EC2Client;
let tableId: string;
let instances: { id: string; privateIp: string }[];
let vpcId: string;
let subnetId: string;
let savedEnv: NodeJS.ProcessEnv;

/**
 * The CCM's cloud.conf and its command line, as its manifest writes them (routes on). VPC and
 * SubnetID are how that CCM runs off EC2 (upstream's "different account or on-premises" case):
 * without them it asks the instance metadata service which instance it runs on.
 */
function ccm(): { conf: string; argv: string[] } {
  const conf =
    `[Global]\nRegion = ${REGION}\nKubernetesClusterID = ${CLUSTER_ID}\nVPC = ${vpcId}\nSubnetID = ${subnetId}\n` +
    `[ServiceOverride "ec2"]\nService = EC2\nRegion = ${REGION}\nURL = ${moto.endpoint}\nSigningRegion = ${REGION}\n`;
  const argv = [
    '--v=2',
    '--cloud-provider=aws',
    '--use-service-account-credentials=true',
    '--configure-cloud-routes=true',
    '--allocate-node-cidrs=true',
    '--cluster-cidr=10.244.0.0/16,fd00:10:244::/56',
    `--cluster-name=${CLUSTER_ID}`,
  ];
  return { conf, argv };
}

async function tableRoutes(): Promise<Ec2Route[]> {
  const out = await ec2.send(new DescribeRouteTablesCommand({ RouteTableIds: [tableId] }));
  return out.RouteTables![0]!.Routes ?? [];
}

/** The node on instance i, named as EC2 names the instance's host. */
function ec2Node(i: number, podCIDRs: string[]): NodeSpecInput {
  const inst = instances[i]!;
  return {
    name: `ip-10-0-1-${i}.ec2.internal`,
    podCIDRs,
    providerID: `aws:///${ZONE}/${inst.id}`,
    addresses: [{ type: 'InternalIP', address: inst.privateIp }],
  };
}

/** The nodes as upstream's node informer would hold them. */
function upstreamNodes(cluster: MemoryCluster): UpstreamNode[] {
  return cluster.list().map((n) => ({ name: n.metadata!.name!, providerID: n.spec?.providerID ?? '' }));
}

/** Upstream's ListRoutes, as name and target node per destination. */
async function upstreamSees(cluster: MemoryCluster): Promise<{ cidr: string; node: string }[]> {
  const routes = await upstreamList(awsUpstream(ccm().conf, upstreamNodes(cluster)), CLUSTER_ID);
  for (const r of routes) assert.equal(r.name, `${CLUSTER_ID}-${r.destinationCIDR}`);
  return routes.map((r) => ({ cidr: r.destinationCIDR, node: r.blackhole ? '(blackhole)' : r.targetNode }));
}

const skip = motoSkip().skip || awsUpstreamSkip().skip;

describe('handover from and rollback to cloud-provider-aws, against moto', { skip }, () => {
  const cluster = new MemoryCluster({ clock: new RealClock() });
  let controller: RouteController;
  let writes: string[];

  before(async () => {
    savedEnv = { ...process.env };
    process.env.AWS_ACCESS_KEY_ID = 'testing';
    process.env.AWS_SECRET_ACCESS_KEY = 'testing';
    process.env.AWS_EC2_METADATA_DISABLED = 'true';
    moto = await startMoto();
    ec2 = new EC2Client({
      endpoint: moto.endpoint,
      region: REGION,
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    });
    ({ vpcId, subnetId } = await createVpc(ec2));
    tableId = await createTable(ec2, vpcId, CLUSTER_ID, 'owned');
    instances = await runInstances(ec2, subnetId, 5);
    // Three nodes the CCM routed, each with upstream's own CreateRoute (which also turns the
    // instance's source/destination check off).
    for (let i = 0; i < 3; i++) {
      addNode(cluster, ec2Node(i, [`10.244.${i}.0/24`]), true);
      await upstreamCreate(awsUpstream(ccm().conf, upstreamNodes(cluster)), CLUSTER_ID, {
        nameHint: `uid-${i}`,
        node: `ip-10-0-1-${i}.ec2.internal`,
        cidr: `10.244.${i}.0/24`,
      });
    }
    const { conf, argv } = ccm();
    const flags = ccmFlags(argv);
    assert.equal(flags.routesEnabled, true);
    const provider = await awsProviderFactory(conf, cluster);
    const counted = counting(provider.routes()!);
    writes = counted.writes;
    controller = handoverController(cluster, provider, flags, counted.routes);
  });
  after(async () => {
    process.env = savedEnv;
    ec2?.destroy();
    await moto?.stop();
  });

  test('handover: the CCM-written table and conditions need no route write and no condition patch', async () => {
    const before = await tableRoutes();
    // What upstream's CreateRoute left: one route per node to its instance, source/dest check off.
    for (let i = 0; i < 3; i++) {
      const route = before.find((r) => r.DestinationCidrBlock === `10.244.${i}.0/24`);
      assert.equal(route?.InstanceId, instances[i]!.id);
      const attr = await ec2.send(
        new DescribeInstanceAttributeCommand({ InstanceId: instances[i]!.id, Attribute: 'sourceDestCheck' }),
      );
      assert.equal(attr.SourceDestCheck?.Value, false);
    }
    assert.deepEqual(await upstreamSees(cluster), [
      { cidr: '10.244.0.0/24', node: 'ip-10-0-1-0.ec2.internal' },
      { cidr: '10.244.1.0/24', node: 'ip-10-0-1-1.ec2.internal' },
      { cidr: '10.244.2.0/24', node: 'ip-10-0-1-2.ec2.internal' },
    ]);
    const report = await reconcileNow(controller);
    assert.equal(report.outcome, 'noop', report.error);
    assert.deepEqual(writes, []);
    assert.deepEqual(cluster.patches, []);
    assert.deepEqual(await tableRoutes(), before);
  });

  test('rollback: the CCM lists the IPv4 routes written here as its own, with the right node', async () => {
    addNode(cluster, ec2Node(3, ['10.244.3.0/24']), false);
    addNode(cluster, ec2Node(4, ['10.244.4.0/24', 'fd00:10:244:4::/64']), false);
    const report = await reconcileNow(controller);
    assert.equal(report.outcome, 'changed', report.error);
    assert.deepEqual(writes.sort(), [
      'create 10.244.3.0/24',
      'create 10.244.4.0/24',
      'create fd00:10:244:4::/64',
    ]);
    assert.deepEqual(await upstreamSees(cluster), [
      { cidr: '10.244.0.0/24', node: 'ip-10-0-1-0.ec2.internal' },
      { cidr: '10.244.1.0/24', node: 'ip-10-0-1-1.ec2.internal' },
      { cidr: '10.244.2.0/24', node: 'ip-10-0-1-2.ec2.internal' },
      { cidr: '10.244.3.0/24', node: 'ip-10-0-1-3.ec2.internal' },
      { cidr: '10.244.4.0/24', node: 'ip-10-0-1-4.ec2.internal' },
    ]);
    // The hazard: the IPv6 route is in the table, but the CCM never lists it (nor deletes it).
    const v6 = (await tableRoutes()).filter((r) => r.DestinationIpv6CidrBlock === 'fd00:10:244:4::/64');
    assert.equal(v6.length, 1);
    assert.equal(v6[0]!.InstanceId, instances[4]!.id);
  });
});
