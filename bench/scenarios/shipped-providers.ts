// The clouds behind the shipped daemons: each factory presets the routes of
// `n` routed nodes (node i: `idle-<i>`, pod CIDR podCIDRv4(i), InternalIP
// nodeIP(i)) in a real or faithful cloud, and gives the daemon's flags and the
// provider IDs its nodes must carry (azure and openstack map routes by node name or address and need none; gce maps them by the instance of the providerID). IPv4 only: Hetzner routes are IPv4-only,
// and the `linux` router's next hops are the nodes' IPv4 InternalIPs.
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import {
  CreateRouteCommand,
  CreateRouteTableCommand,
  CreateSubnetCommand,
  CreateVpcCommand,
  EC2Client,
  RunInstancesCommand,
} from '@aws-sdk/client-ec2';
import { azureFakePath, startAzureFake } from '../../test/support/azure-fake.ts';
import { gceFakePath, startGceFake } from '../../test/support/gce-fake.ts';
import { HcloudFake } from '../../test/support/hcloud-fake.ts';
import { motoServerPath, startMoto } from '../../test/support/moto.ts';
import { netnsSupport } from '../../test/support/netns.ts';
import { CREDENTIALS, OpenStack, neutronPython } from '../../test/support/openstack.ts';
import { nodeIP, nodeName, podCIDRv4 } from '../lib/nodes.ts';

const run = promisify(execFile);

/** What one provider needs: its flags and environment; `close` tears its cloud down. */
export interface ProviderSetup {
  readonly args: string[];
  readonly env?: NodeJS.ProcessEnv;
  /** spec.providerID of node i (the plug-in maps routes to nodes through it). */
  readonly providerID?: (i: number) => string;
  close(): Promise<void>;
}

/** Presets the routes of nodes 0..n-1 in a fresh cloud under `dir`. */
export type ProviderFactory = (n: number, dir: string) => Promise<ProviderSetup>;

const indexes = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

/** `memory`: the preset routes in a state file. */
export const memoryProvider: ProviderFactory = (n, dir) => {
  const state = path.join(dir, 'memory-state.json');
  fs.writeFileSync(
    state,
    JSON.stringify(
      indexes(n).map((i) => ({
        name: '',
        clusterName: 'kubernetes',
        targetNode: nodeName('idle', i),
        targetNodeAddresses: [],
        destinationCIDR: podCIDRv4(i),
        blackhole: false,
      })),
    ),
  );
  const config = path.join(dir, 'memory.yaml');
  fs.writeFileSync(config, `stateFile: ${JSON.stringify(state)}\n`);
  return Promise.resolve({
    args: ['--cloud-provider=memory', `--cloud-config=${config}`],
    close: () => Promise.resolve(),
  });
};

const HCLOUD_NETWORK = 1;
const hcloudServerId = (i: number): number => 1000 + i;

/** `hcloud` against the stateful API fake: one network, one server per node, its routes. */
export const hcloudProvider: ProviderFactory = async (n, dir) => {
  // Far above what a daemon spends here, so the fake never throttles a measurement.
  const fake = await HcloudFake.start({ rateLimit: 1_000_000, routeLimit: Math.max(100, n) });
  fake.addNetwork({
    id: HCLOUD_NETWORK,
    name: 'bench',
    ipRange: '172.16.0.0/12',
    routes: indexes(n).map((i) => ({ destination: podCIDRv4(i), gateway: nodeIP(i) })),
  });
  for (const i of indexes(n))
    fake.addServer({
      id: hcloudServerId(i),
      name: nodeName('idle', i),
      privateNet: [{ network: HCLOUD_NETWORK, ip: nodeIP(i) }],
    });
  const config = path.join(dir, 'hcloud.yaml');
  fs.writeFileSync(config, `network: ${HCLOUD_NETWORK}\nendpoint: ${fake.endpoint}\n`);
  return {
    args: ['--cloud-provider=hcloud', `--cloud-config=${config}`],
    env: { ...process.env, HCLOUD_TOKEN: fake.token },
    providerID: (i) => `hcloud://${hcloudServerId(i)}`,
    close: () => fake.close(),
  };
};

const ROUTER_ADDRESS = '172.31.255.254/12';

/**
 * `linux` on a router namespace: a veth link puts every node's InternalIP on
 * a connected network, and the pod routes (protocol 200) are preset with one
 * `ip -batch`.
 */
export const linuxProvider: ProviderFactory = async (n, dir) => {
  const ns = `crc-bench-${process.pid}-${n}`;
  await run('ip', ['netns', 'add', ns]);
  const close = async (): Promise<void> => {
    await run('ip', ['netns', 'del', ns]);
  };
  try {
    // A veth pair rather than a dummy link: containers' kernels often lack the dummy module.
    await run('ip', ['-n', ns, 'link', 'add', 'pods0', 'type', 'veth', 'peer', 'name', 'pods1']);
    await run('ip', ['-n', ns, 'addr', 'add', ROUTER_ADDRESS, 'dev', 'pods0']);
    await run('ip', ['-n', ns, 'link', 'set', 'pods1', 'up']);
    await run('ip', ['-n', ns, 'link', 'set', 'pods0', 'up']);
    const batch = path.join(dir, 'routes.batch');
    fs.writeFileSync(
      batch,
      indexes(n)
        .map((i) => `route add ${podCIDRv4(i)} via ${nodeIP(i)} table main proto 200\n`)
        .join(''),
    );
    if (n > 0) await run('ip', ['-n', ns, '-batch', batch]);
  } catch (err) {
    await close();
    throw err;
  }
  const config = path.join(dir, 'linux.yaml');
  fs.writeFileSync(config, `netns: ${ns}\n`);
  return { args: ['--cloud-provider=linux', `--cloud-config=${config}`], close };
};

const AWS_ZONE = 'us-east-1a';

/**
 * `aws` against moto: a VPC outside the cluster CIDR, one instance per node and
 * a route table holding the pod routes to them.
 */
export const awsProvider: ProviderFactory = async (n, dir) => {
  const moto = await startMoto();
  try {
    const ec2 = new EC2Client({
      region: 'us-east-1',
      endpoint: moto.endpoint,
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    });
    const vpc = await ec2.send(new CreateVpcCommand({ CidrBlock: '192.168.0.0/16' }));
    const vpcId = vpc.Vpc!.VpcId!;
    const subnet = await ec2.send(
      new CreateSubnetCommand({ VpcId: vpcId, CidrBlock: '192.168.0.0/17', AvailabilityZone: AWS_ZONE }),
    );
    const table = await ec2.send(new CreateRouteTableCommand({ VpcId: vpcId }));
    const tableId = table.RouteTable!.RouteTableId!;
    const ids: string[] = [];
    for (let left = n; left > 0; left -= 500) {
      const count = Math.min(500, left);
      const out = await ec2.send(
        new RunInstancesCommand({
          ImageId: 'ami-12345678',
          MinCount: count,
          MaxCount: count,
          SubnetId: subnet.Subnet!.SubnetId!,
        }),
      );
      ids.push(...out.Instances!.map((x) => x.InstanceId!));
    }
    // One at a time: moto answers concurrent CreateRoute calls on one table with HTTP 500.
    for (const i of indexes(n))
      await ec2.send(
        new CreateRouteCommand({
          RouteTableId: tableId,
          DestinationCidrBlock: podCIDRv4(i),
          InstanceId: ids[i]!,
        }),
      );
    ec2.destroy();
    const config = path.join(dir, 'aws.yaml');
    fs.writeFileSync(config, `region: us-east-1\nrouteTableId: ${tableId}\nendpoint: ${moto.endpoint}\n`);
    return {
      args: ['--cloud-provider=aws', `--cloud-config=${config}`],
      env: {
        ...process.env,
        AWS_ACCESS_KEY_ID: 'testing',
        AWS_SECRET_ACCESS_KEY: 'testing',
        AWS_EC2_METADATA_DISABLED: 'true',
      },
      providerID: (i) => `aws:///${AWS_ZONE}/${ids[i]!}`,
      close: () => moto.stop(),
    };
  } catch (err) {
    await moto.stop();
    throw err;
  }
};

const AZURE_SUBSCRIPTION = '00000000-0000-0000-0000-00000000be0c';

/**
 * `azure` against Microsoft's generated fake servers (testenv/azure-fake): one
 * route table holding the pod routes, named by node as cloud-provider-azure
 * names them; the daemon gets its token from the fake's managed-identity endpoint.
 * Past 1,000 nodes the table is larger than Azure allows; it still measures memory.
 */
export const azureProvider: ProviderFactory = async (n, dir) => {
  const fake = await startAzureFake();
  try {
    const routes = indexes(n).map((i) => ({
      name: nodeName('idle', i),
      properties: {
        addressPrefix: podCIDRv4(i),
        nextHopType: 'VirtualAppliance',
        nextHopIpAddress: nodeIP(i),
      },
    }));
    await fake.putTable(AZURE_SUBSCRIPTION, 'bench', 'bench-routes', {
      location: 'westeurope',
      properties: { routes },
    });
    const config = path.join(dir, 'azure.json');
    fs.writeFileSync(
      config,
      JSON.stringify({
        subscriptionId: AZURE_SUBSCRIPTION,
        resourceGroup: 'bench',
        location: 'westeurope',
        routeTableName: 'bench-routes',
        useManagedIdentityExtension: true,
        resourceManagerEndpoint: fake.endpoint,
      }),
    );
    return {
      args: ['--cloud-provider=azure', `--cloud-config=${config}`],
      env: { ...process.env, AZURE_POD_IDENTITY_AUTHORITY_HOST: fake.endpoint },
      close: () => fake.stop(),
    };
  } catch (err) {
    await fake.stop();
    throw err;
  }
};

const GCE_PROJECT = 'bench-project';
const GCE_ZONE = 'europe-west1-b';

/**
 * `gce` against Google's MockGCE served as the Compute Engine API
 * (testenv/gce-fake): one instance per node, named like it, and a route per
 * pod CIDR to it with upstream's description and cluster prefix; the daemon
 * gets its token from the fake's metadata server, as on an instance.
 */
export const gceProvider: ProviderFactory = async (n, dir) => {
  const fake = await startGceFake();
  try {
    const network = `https://www.googleapis.com/compute/v1/projects/${GCE_PROJECT}/global/networks/bench-net`;
    await fake.addInstances(
      ...indexes(n).map((i) => ({ project: GCE_PROJECT, zone: GCE_ZONE, name: nodeName('idle', i) })),
    );
    for (let start = 0; start < n; start += 50)
      await Promise.all(
        indexes(Math.min(50, n - start)).map((k) =>
          fake.insertRoute(GCE_PROJECT, {
            name: `kubernetes-${nodeName('idle', start + k)}`,
            destRange: podCIDRv4(start + k),
            network,
            nextHopInstance: `projects/${GCE_PROJECT}/zones/${GCE_ZONE}/instances/${nodeName('idle', start + k)}`,
            priority: 1000,
            description: 'k8s-node-route',
          }),
        ),
      );
    const config = path.join(dir, 'gce.conf');
    fs.writeFileSync(
      config,
      `[global]\nproject-id = ${GCE_PROJECT}\nnetwork-name = bench-net\napi-endpoint = ${fake.api}\n`,
    );
    return {
      args: ['--cloud-provider=gce', `--cloud-config=${config}`],
      // Application Default Credentials: no key file, no gcloud login, the fake's metadata server.
      env: Object.fromEntries(
        Object.entries({
          ...process.env,
          GCE_METADATA_HOST: fake.endpoint.replace('http://', ''),
          CLOUDSDK_CONFIG: path.join(dir, 'gcloud'),
        }).filter(([k]) => k !== 'GOOGLE_APPLICATION_CREDENTIALS'),
      ),
      providerID: (i) => `gce://${GCE_PROJECT}/${GCE_ZONE}/${nodeName('idle', i)}`,
      close: () => fake.stop(),
    };
  } catch (err) {
    await fake.stop();
    throw err;
  }
};

/**
 * `openstack` against the real neutron-server (PyPI, testenv/neutron) behind the Keystone
 * stand-in: one router with an interface on 172.16.0.0/12 (the nodes' addresses; the router
 * takes 172.31.255.254 so no node's address is its own) holding the pod routes as extra routes.
 */
export const openstackProvider: ProviderFactory = async (n, dir) => {
  const cloud = await OpenStack.start({ maxRoutes: n + 10 });
  try {
    const { routerId } = await cloud.topology('172.16.0.0/12', 'fd00::/64', '172.31.255.254');
    await cloud.setRoutes(
      routerId,
      indexes(n).map((i) => ({ destination: podCIDRv4(i), nexthop: nodeIP(i) })),
    );
    const c = CREDENTIALS;
    const config = path.join(dir, 'cloud.conf');
    fs.writeFileSync(
      config,
      `[Global]\nauth-url = ${cloud.authUrl}\napplication-credential-id = ${c.appCredentialId}\n` +
        `application-credential-secret = ${c.appCredentialSecret}\nregion = RegionOne\n[Route]\nrouter-id = ${routerId}\n`,
    );
    return {
      args: ['--cloud-provider=openstack', `--cloud-config=${config}`],
      close: () => cloud.stop(),
    };
  } catch (err) {
    await cloud.stop();
    throw err;
  }
};

/** Every provider this machine can run, and why the others are left out. */
export async function availableProviders(): Promise<{
  providers: Map<'memory' | 'linux' | 'hcloud' | 'aws' | 'azure' | 'gce' | 'openstack', ProviderFactory>;
  skipped: Record<string, string>;
}> {
  const providers = new Map<
    'memory' | 'linux' | 'hcloud' | 'aws' | 'azure' | 'gce' | 'openstack',
    ProviderFactory
  >([['memory', memoryProvider]]);
  const skipped: Record<string, string> = {};
  const netns = await netnsSupport();
  if (netns.ok) providers.set('linux', linuxProvider);
  else skipped['linux'] = `network namespaces unavailable: ${netns.reason}`;
  providers.set('hcloud', hcloudProvider);
  if (motoServerPath() !== undefined) providers.set('aws', awsProvider);
  else skipped['aws'] = 'moto missing: run `bash scripts/moto.sh install`';
  if (azureFakePath() !== undefined) providers.set('azure', azureProvider);
  else skipped['azure'] = 'azure fake missing: run `bash scripts/azure-fake.sh build`';
  if (gceFakePath() !== undefined) providers.set('gce', gceProvider);
  else skipped['gce'] = 'gce fake missing: run `bash scripts/gce-fake.sh build`';
  if (neutronPython() !== undefined) providers.set('openstack', openstackProvider);
  else skipped['openstack'] = 'neutron missing: run `bash scripts/neutron.sh install`';
  return { providers, skipped };
}
