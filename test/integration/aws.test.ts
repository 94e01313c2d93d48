// The aws plug-in against moto_server (TESTENV.md §7): real EC2 API calls on
// loopback. Run: scripts/moto.sh && npx node --test test/integration/aws.test.ts
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import {
  AttachInternetGatewayCommand,
  CreateInternetGatewayCommand,
  CreateRouteCommand,
  DescribeInstanceAttributeCommand,
  EC2Client,
} from '@aws-sdk/client-ec2';
import { EC2Client as PluginEc2Client } from '../../src/cloud/aws/ec2.ts';
import { errorKind } from '../../src/core/errors.ts';
import type { CallOptions, Node, NodeLister, Route } from '../../src/core/types.ts';
import { AwsRoutes, awsProviderFactory } from '../../src/cloud/aws/index.ts';
import {
  ZONE,
  byDestination,
  createFixture,
  createTable,
  createVpc,
  nodesFor,
  runInstances,
  tableRoutes,
} from '../support/ec2-fixture.ts';
import type { Ec2Fixture } from '../support/ec2-fixture.ts';
import { motoSkip, startMoto } from '../support/moto.ts';
import type { Moto } from '../support/moto.ts';

// Nothing may probe the instance metadata address; credentials are explicit.
process.env.AWS_EC2_METADATA_DISABLED = 'true';
const CREDENTIALS = { accessKeyId: 'testing', secretAccessKey: 'testing' };
const CLUSTER = 'test-cluster';

let moto: Moto;
// `ec2` sets the fixtures up with the SDK itself; `plugin` is the plug-in's own client (its
// door to the SDK, which the packed library bundles: test/integration/aws-packed.test.ts runs
// this file against that bundle).
let ec2: EC2Client;
let plugin: PluginEc2Client;

function opts(): CallOptions {
  return { signal: new AbortController().signal, reconcile: { id: 'r', scratch: new Map() } };
}

function want(targetNode: string, destinationCIDR: string): Route {
  return {
    name: '',
    targetNode,
    targetNodeAddresses: [],
    enableNodeAddresses: false,
    destinationCIDR,
    blackhole: false,
  };
}

function lister(nodes: Node[]): NodeLister {
  return { get: (name) => nodes.find((n) => n.metadata?.name === name), list: () => nodes };
}

function fixture(instanceCount: number): Promise<Ec2Fixture> {
  return createFixture(ec2, CLUSTER, instanceCount);
}

function summary(routes: Route[]): string[] {
  return routes.map((r) => `${r.destinationCIDR}>${r.targetNode}${r.blackhole ? ' (blackhole)' : ''}`).sort();
}

describe('aws provider against moto', motoSkip(), () => {
  before(async () => {
    moto = await startMoto();
    const clientConfig = {
      endpoint: moto.endpoint,
      region: 'us-east-1',
      credentials: CREDENTIALS,
      maxAttempts: 1,
    };
    ec2 = new EC2Client(clientConfig);
    plugin = new PluginEc2Client(clientConfig);
  });
  after(async () => {
    ec2?.destroy();
    plugin?.destroy();
    await moto?.stop();
  });
  beforeEach(async () => {
    await moto.reset();
  });

  function provider(nodes: Node[], config = {}): AwsRoutes {
    return new AwsRoutes(plugin, config, lister(nodes));
  }

  test('create, list with instance IDs mapped to node names, delete', async () => {
    const f = await fixture(3);
    const nodes = nodesFor(f);
    const routes = provider(nodes);
    assert.deepEqual(await routes.listRoutes(CLUSTER, opts()), [], 'the local route is not listed');

    const o = opts();
    for (const node of nodes) {
      await routes.createRoute(
        CLUSTER,
        node.metadata!.uid!,
        want(node.metadata!.name!, node.spec!.podCIDRs![0]!),
        o,
      );
    }
    assert.deepEqual(summary(await routes.listRoutes(CLUSTER, opts())), [
      '10.244.0.0/24>node-0',
      '10.244.1.0/24>node-1',
      '10.244.2.0/24>node-2',
    ]);
    const inTable = byDestination(await tableRoutes(ec2, f.tableId));
    assert.equal(inTable['10.244.1.0/24'], f.instances[1]!.id);
    assert.equal(inTable['10.0.0.0/16'], 'local');

    const listed = await routes.listRoutes(CLUSTER, opts());
    await routes.deleteRoute(
      CLUSTER,
      listed.find((r) => r.targetNode === 'node-1')!,
      opts(),
    );
    assert.deepEqual(summary(await routes.listRoutes(CLUSTER, opts())), [
      '10.244.0.0/24>node-0',
      '10.244.2.0/24>node-2',
    ]);
  });

  test('the source/destination check is turned off on create, unless configured not to', async () => {
    const f = await fixture(2);
    const nodes = nodesFor(f);
    const check = async (i: number) =>
      (
        await ec2.send(
          new DescribeInstanceAttributeCommand({
            InstanceId: f.instances[i]!.id,
            Attribute: 'sourceDestCheck',
          }),
        )
      ).SourceDestCheck?.Value;
    await provider(nodes).createRoute(CLUSTER, 'uid', want('node-0', '10.244.0.0/24'), opts());
    await provider(nodes, { disableSrcDstCheck: false }).createRoute(
      CLUSTER,
      'uid',
      want('node-1', '10.244.1.0/24'),
      opts(),
    );
    assert.equal(await check(0), false);
    assert.equal(await check(1), true);
  });

  test('idempotent: create twice is one route, deleting a missing route succeeds', async () => {
    const f = await fixture(1);
    const routes = provider(nodesFor(f));
    const first = await routes.createRoute(CLUSTER, 'uid', want('node-0', '10.244.0.0/24'), opts());
    const again = await routes.createRoute(CLUSTER, 'uid', want('node-0', '10.244.0.0/24'), opts());
    // R66: both return the route exactly as listRoutes reports it.
    const listed = await routes.listRoutes(CLUSTER, opts());
    assert.deepEqual(first, listed[0]);
    assert.deepEqual(again, listed[0]);
    const cluster = (await tableRoutes(ec2, f.tableId)).filter(
      (r) => r.DestinationCidrBlock === '10.244.0.0/24',
    );
    assert.equal(cluster.length, 1);
    await routes.deleteRoute(CLUSTER, want('node-0', '10.244.0.0/24'), opts());
    await routes.deleteRoute(CLUSTER, want('node-0', '10.244.0.0/24'), opts());
    await routes.deleteRoute(CLUSTER, want('node-0', 'fd00:10:244::/64'), opts());
    assert.deepEqual(await routes.listRoutes(CLUSTER, opts()), []);
  });

  test('a route to another instance is replaced', async () => {
    const f = await fixture(2);
    const routes = provider(nodesFor(f));
    await routes.createRoute(CLUSTER, 'uid-0', want('node-0', '10.244.7.0/24'), opts());
    await routes.createRoute(CLUSTER, 'uid-1', want('node-1', '10.244.7.0/24'), opts());
    assert.equal(byDestination(await tableRoutes(ec2, f.tableId))['10.244.7.0/24'], f.instances[1]!.id);
    assert.deepEqual(summary(await routes.listRoutes(CLUSTER, opts())), ['10.244.7.0/24>node-1']);
  });

  test('dual-stack: IPv6 pod CIDRs use the IPv6 destination', async () => {
    const f = await fixture(1);
    const routes = provider(nodesFor(f));
    const o = opts();
    await routes.createRoute(CLUSTER, 'uid-0', want('node-0', '10.244.0.0/24'), o);
    await routes.createRoute(CLUSTER, 'uid-0', want('node-0', 'fd00:10:244::/64'), o);
    assert.deepEqual(summary(await routes.listRoutes(CLUSTER, opts())), [
      '10.244.0.0/24>node-0',
      'fd00:10:244::/64>node-0',
    ]);
    const v6 = (await tableRoutes(ec2, f.tableId)).find(
      (r) => r.DestinationIpv6CidrBlock === 'fd00:10:244::/64',
    );
    assert.equal(v6?.InstanceId, f.instances[0]!.id);
    await routes.createRoute(CLUSTER, 'uid-0', want('node-0', 'fd00:10:244::/64'), opts());
    await routes.deleteRoute(CLUSTER, want('node-0', 'fd00:10:244::/64'), opts());
    assert.deepEqual(summary(await routes.listRoutes(CLUSTER, opts())), ['10.244.0.0/24>node-0']);
  });

  test('two clusters in one VPC keep to their own tables', async () => {
    const { vpcId, subnetId } = await createVpc(ec2);
    const tableA = await createTable(ec2, vpcId, 'cluster-a');
    const tableB = await createTable(ec2, vpcId, 'cluster-b', 'shared');
    const instances = await runInstances(ec2, subnetId, 2);
    const a = provider(nodesFor({ instances: [instances[0]!] }, 'a'));
    const b = provider(nodesFor({ instances: [instances[1]!] }, 'b'));
    // The same pod CIDR in both clusters: each table gets its own route.
    await a.createRoute('cluster-a', 'uid', want('a-0', '10.244.0.0/24'), opts());
    await b.createRoute('cluster-b', 'uid', want('b-0', '10.244.0.0/24'), opts());
    await b.createRoute('cluster-b', 'uid', want('b-0', '10.244.9.0/24'), opts());
    assert.deepEqual(summary(await a.listRoutes('cluster-a', opts())), ['10.244.0.0/24>a-0']);
    assert.equal(byDestination(await tableRoutes(ec2, tableA))['10.244.9.0/24'], undefined);
    assert.deepEqual(summary(await b.listRoutes('cluster-b', opts())), [
      '10.244.0.0/24>b-0',
      '10.244.9.0/24>b-0',
    ]);
    await a.deleteRoute('cluster-a', want('a-0', '10.244.0.0/24'), opts());
    assert.deepEqual(await a.listRoutes('cluster-a', opts()), []);
    assert.equal(byDestination(await tableRoutes(ec2, tableB))['10.244.0.0/24'], instances[1]!.id);
  });

  test('foreign routes are left alone; an instance with no node is listed with targetNode ""', async () => {
    const f = await fixture(2);
    const igw = (await ec2.send(new CreateInternetGatewayCommand({}))).InternetGateway!.InternetGatewayId!;
    await ec2.send(new AttachInternetGatewayCommand({ InternetGatewayId: igw, VpcId: f.vpcId }));
    await ec2.send(
      new CreateRouteCommand({ RouteTableId: f.tableId, DestinationCidrBlock: '0.0.0.0/0', GatewayId: igw }),
    );
    // Instance 1 is an appliance, not a node.
    await ec2.send(
      new CreateRouteCommand({
        RouteTableId: f.tableId,
        DestinationCidrBlock: '192.168.0.0/16',
        InstanceId: f.instances[1]!.id,
      }),
    );
    const routes = provider(nodesFor(f).slice(0, 1));
    await routes.createRoute(CLUSTER, 'uid', want('node-0', '10.244.0.0/24'), opts());
    assert.deepEqual(summary(await routes.listRoutes(CLUSTER, opts())), [
      '10.244.0.0/24>node-0',
      '192.168.0.0/16>',
    ]);
    await routes.deleteRoute(CLUSTER, want('node-0', '10.244.0.0/24'), opts());
    const left = byDestination(await tableRoutes(ec2, f.tableId));
    assert.equal(left['0.0.0.0/0'], igw);
    assert.equal(left['192.168.0.0/16'], f.instances[1]!.id);
    assert.equal(left['10.0.0.0/16'], 'local');
    assert.equal(left['10.244.0.0/24'], undefined);
  });

  test('lookup errors: no table, two tables, a wrong table ID', async () => {
    const { vpcId } = await createVpc(ec2);
    await createTable(ec2, vpcId, 'other-cluster');
    await createTable(ec2, vpcId, undefined);
    const routes = new AwsRoutes(plugin, {}, lister([]));
    const none = await routes.listRoutes(CLUSTER, opts()).catch((e: unknown) => e);
    assert.equal(errorKind(none), 'permanent');
    assert.match(
      (none as Error).message,
      /^no route table tagged kubernetes\.io\/cluster\/test-cluster=owned\|shared for cluster test-cluster: tag the cluster route table or set routeTableId in the cloud config$/,
    );

    const t1 = await createTable(ec2, vpcId, CLUSTER);
    const t2 = await createTable(ec2, vpcId, CLUSTER, 'shared');
    const two = await routes.listRoutes(CLUSTER, opts()).catch((e: unknown) => e);
    assert.equal(errorKind(two), 'permanent');
    assert.match(
      (two as Error).message,
      /^found 2 of route table tagged kubernetes\.io\/cluster\/test-cluster=owned\|shared/,
    );
    assert.ok((two as Error).message.includes(t1) && (two as Error).message.includes(t2));
    assert.match((two as Error).message, /set routeTableId in the cloud config to choose one$/);

    // Pinning one table by ID resolves the ambiguity; a wrong ID is a clear error.
    assert.deepEqual(
      await new AwsRoutes(plugin, { routeTableId: t2 }, lister([])).listRoutes(CLUSTER, opts()),
      [],
    );
    const wrong = await new AwsRoutes(plugin, { routeTableId: 'rtb-00000000000000000' }, lister([]))
      .listRoutes(CLUSTER, opts())
      .catch((e: unknown) => e);
    assert.equal(errorKind(wrong), 'permanent');
    assert.match(
      (wrong as Error).message,
      /DescribeRouteTables rtb-00000000000000000: InvalidRouteTableID\.NotFound/,
    );
  });

  test("creating for an unknown instance is a permanent error with AWS's message", async () => {
    const f = await fixture(1);
    const ghost: Node = {
      metadata: { name: 'ghost' },
      spec: { providerID: `aws:///${ZONE}/i-00000000000000000` },
    };
    const routes = new AwsRoutes(plugin, { disableSrcDstCheck: false }, lister([...nodesFor(f), ghost]));
    const err = await routes
      .createRoute(CLUSTER, 'uid', want('ghost', '10.244.5.0/24'), opts())
      .catch((e: unknown) => e);
    assert.equal(errorKind(err), 'permanent');
    assert.match((err as Error).message, /InvalidInstanceID\.NotFound/);
    assert.ok(!(err as Error).message.includes('testing'), 'no credentials in the message');
  });

  test('the factory reads YAML config and the environment', async () => {
    const f = await fixture(1);
    const saved = { ...process.env };
    Object.assign(process.env, {
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      AWS_DEFAULT_REGION: 'us-east-1',
    });
    delete process.env.AWS_REGION;
    delete process.env.AWS_PROFILE;
    try {
      const config = `endpoint: ${moto.endpoint}\nrouteTableId: ${f.tableId}\nvpcId: ${f.vpcId}\n`;
      const cloud = await awsProviderFactory(config, lister(nodesFor(f)));
      assert.equal(cloud.name, 'aws');
      const routes = cloud.routes()!;
      // The cluster name does not matter once the table is pinned.
      await routes.createRoute('any-name', 'uid', want('node-0', '10.244.0.0/24'), opts());
      assert.deepEqual(summary(await routes.listRoutes('any-name', opts())), ['10.244.0.0/24>node-0']);
    } finally {
      process.env = saved;
    }
  });

  test('one reconcile looks the table up once', async () => {
    const f = await fixture(3);
    const counted = new PluginEc2Client({
      endpoint: moto.endpoint,
      region: 'us-east-1',
      credentials: CREDENTIALS,
      maxAttempts: 1,
    });
    const calls: string[] = [];
    counted.middlewareStack.add(
      (next, context) => async (args) => {
        calls.push(context.commandName ?? '?');
        return next(args);
      },
      { step: 'initialize', name: 'countCalls' },
    );
    try {
      const routes = new AwsRoutes(counted, { disableSrcDstCheck: false }, lister(nodesFor(f)));
      const o = opts();
      await routes.listRoutes(CLUSTER, o);
      await Promise.all(
        [0, 1, 2].map((i) =>
          routes.createRoute(CLUSTER, `uid-${i}`, want(`node-${i}`, `10.244.${i}.0/24`), o),
        ),
      );
      assert.deepEqual(calls.sort(), [
        'CreateRouteCommand',
        'CreateRouteCommand',
        'CreateRouteCommand',
        'DescribeRouteTablesCommand',
      ]);
    } finally {
      counted.destroy();
    }
  });
});
