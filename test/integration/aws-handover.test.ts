// Handover from cloud-provider-aws's route controller, and rollback to it, against moto.
// Handover: moto holds the table exactly as that CCM writes it and the nodes carry the
// condition its route controller leaves; the controller, started with that CCM's INI
// cloud.conf and command line, writes no route and patches no condition. Rollback: the routes
// the controller wrote for new nodes are read back with a mirror of that CCM's ListRoutes
// (k8s.io/cloud-provider-aws v1.37.1 pkg/providers/v1/aws_routes.go), which finds each IPv4
// one as its own with the right target, and none of the IPv6 ones (its hazard: it skips
// routes without DestinationCidrBlock, docs/migration.md).
// Run: scripts/moto.sh && node --test test/integration/aws-handover.test.ts
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  CreateRouteCommand,
  DescribeRouteTablesCommand,
  EC2Client,
  ModifyInstanceAttributeCommand,
} from '@aws-sdk/client-ec2';
import type { Route as Ec2Route } from '@aws-sdk/client-ec2';
import { parseFlags } from '../../src/cli/flags.ts';
import { awsProviderFactory, instanceIdFromProviderID } from '../../src/cloud/aws/index.ts';
import { MemoryCluster } from '../../src/cluster/memory-cluster.ts';
import { RouteController } from '../../src/controller/route-controller.ts';
import { RealClock } from '../../src/core/clock.ts';
import type { CallOptions, Route, Routes } from '../../src/core/types.ts';
import { createTable, createVpc, runInstances, ZONE } from '../support/ec2-fixture.ts';
import { motoSkip, startMoto, type Moto } from '../support/moto.ts';

const REGION = 'us-east-1';
const CLUSTER_ID = 'prod';
// As the CCM's route controller leaves a routed node (upstream updateNetworkingCondition).
const ROUTED = {
  type: 'NetworkUnavailable',
  status: 'False',
  reason: 'RouteCreated',
  message: 'RouteController created a route',
  lastTransitionTime: new Date(0).toISOString(),
};

let moto: Moto;
let ec2: EC2Client;
let tableId: string;
let instances: { id: string; privateIp: string }[];
let savedEnv: NodeJS.ProcessEnv;

/** The CCM's cloud.conf and its command line, as its manifest writes them (routes on). */
function ccm(): { conf: string; argv: string[] } {
  const conf =
    `[Global]\nRegion = ${REGION}\nKubernetesClusterID = ${CLUSTER_ID}\n` +
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

/** Counts the writes the controller sends through the provider. */
function counting(inner: Routes): { routes: Routes; writes: string[] } {
  const writes: string[] = [];
  return {
    writes,
    routes: {
      listRoutes: (c: string, o: CallOptions) => inner.listRoutes(c, o),
      createRoute: (c: string, h: string, r: Readonly<Route>, o: CallOptions) => {
        writes.push(`create ${r.destinationCIDR}`);
        return inner.createRoute(c, h, r, o);
      },
      deleteRoute: (c: string, r: Readonly<Route>, o: CallOptions) => {
        writes.push(`delete ${r.destinationCIDR}`);
        return inner.deleteRoute(c, r, o);
      },
    },
  };
}

/**
 * cloud-provider-aws v1.37.1 ListRoutes, mirrored: every route with a DestinationCidrBlock;
 * blackholes as such; an instance route's node is the node whose providerID names the instance.
 */
function upstreamListRoutes(routes: Ec2Route[], cluster: MemoryCluster): { cidr: string; node: string }[] {
  const byInstance = new Map<string, string>();
  for (const n of cluster.list()) {
    const id = instanceIdFromProviderID(n.spec?.providerID ?? '');
    if (id !== undefined) byInstance.set(id, n.metadata!.name!);
  }
  const out: { cidr: string; node: string }[] = [];
  for (const r of routes) {
    const cidr = r.DestinationCidrBlock ?? '';
    if (cidr === '') continue;
    if (r.State === 'blackhole') out.push({ cidr, node: '(blackhole)' });
    else if (r.InstanceId) {
      const node = byInstance.get(r.InstanceId);
      if (node !== undefined) out.push({ cidr, node });
    }
  }
  return out.sort((a, b) => a.cidr.localeCompare(b.cidr));
}

describe('handover from and rollback to cloud-provider-aws, against moto', motoSkip(), () => {
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
    const { vpcId, subnetId } = await createVpc(ec2);
    tableId = await createTable(ec2, vpcId, CLUSTER_ID, 'owned');
    instances = await runInstances(ec2, subnetId, 5);
    // Three nodes the CCM routed: source/destination check off, then one IPv4 route each.
    for (let i = 0; i < 3; i++) {
      const inst = instances[i]!;
      await ec2.send(
        new ModifyInstanceAttributeCommand({ InstanceId: inst.id, SourceDestCheck: { Value: false } }),
      );
      await ec2.send(
        new CreateRouteCommand({
          RouteTableId: tableId,
          DestinationCidrBlock: `10.244.${i}.0/24`,
          InstanceId: inst.id,
        }),
      );
      cluster.createNode({
        name: `ip-10-0-1-${i}.ec2.internal`,
        podCIDRs: [`10.244.${i}.0/24`],
        providerID: `aws:///${ZONE}/${inst.id}`,
        addresses: [{ type: 'InternalIP', address: inst.privateIp }],
        conditions: [ROUTED],
      });
    }
    const { conf, argv } = ccm();
    const parsed = parseFlags(argv);
    assert.deepEqual(parsed.errors, []);
    assert.equal(parsed.flags.routesEnabled, true);
    const provider = await awsProviderFactory(conf, cluster);
    const counted = counting(provider.routes()!);
    writes = counted.writes;
    controller = new RouteController({
      routes: counted.routes,
      nodes: cluster,
      statusWriter: cluster,
      recorder: cluster,
      clusterName: parsed.flags.clusterName,
      clusterCIDRs: parsed.flags.clusterCIDRs,
      ...(provider.routeTargetKeys ? { routeTargetKeys: provider.routeTargetKeys } : {}),
    });
  });
  after(async () => {
    process.env = savedEnv;
    ec2?.destroy();
    await moto?.stop();
  });

  test('handover: the CCM-written table and conditions need no route write and no condition patch', async () => {
    const before = await tableRoutes();
    const report = await controller.reconcileOnce('periodic', new AbortController().signal);
    assert.equal(report.outcome, 'noop', report.error);
    assert.deepEqual(writes, []);
    assert.deepEqual(cluster.patches, []);
    assert.deepEqual(await tableRoutes(), before);
  });

  test('rollback: the CCM lists the IPv4 routes written here as its own, with the right node', async () => {
    cluster.createNode({
      name: 'ip-10-0-1-3.ec2.internal',
      podCIDRs: ['10.244.3.0/24'],
      providerID: `aws:///${ZONE}/${instances[3]!.id}`,
      addresses: [{ type: 'InternalIP', address: instances[3]!.privateIp }],
    });
    cluster.createNode({
      name: 'ip-10-0-1-4.ec2.internal',
      podCIDRs: ['10.244.4.0/24', 'fd00:10:244:4::/64'],
      providerID: `aws:///${ZONE}/${instances[4]!.id}`,
      addresses: [{ type: 'InternalIP', address: instances[4]!.privateIp }],
    });
    const report = await controller.reconcileOnce('periodic', new AbortController().signal);
    assert.equal(report.outcome, 'changed', report.error);
    assert.deepEqual(writes.sort(), [
      'create 10.244.3.0/24',
      'create 10.244.4.0/24',
      'create fd00:10:244:4::/64',
    ]);
    const seen = upstreamListRoutes(await tableRoutes(), cluster);
    assert.deepEqual(seen, [
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
