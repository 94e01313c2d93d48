// The EC2 fixture of TESTENV.md §7, built through the API of moto (or any EC2):
// a VPC with an IPv6 block, one subnet, cluster-tagged route tables, instances,
// and one Node per instance as the cloud node controller would register it.
import assert from 'node:assert/strict';
import {
  CreateRouteTableCommand,
  CreateSubnetCommand,
  CreateVpcCommand,
  DescribeRouteTablesCommand,
  RunInstancesCommand,
} from '@aws-sdk/client-ec2';
import type { EC2Client, Route as Ec2Route } from '@aws-sdk/client-ec2';
import type { Node } from '../../src/core/types.ts';

export const ZONE = 'us-east-1a';

export interface Ec2Fixture {
  vpcId: string;
  subnetId: string;
  tableId: string;
  instances: { id: string; privateIp: string }[];
}

export async function createVpc(ec2: EC2Client): Promise<{ vpcId: string; subnetId: string }> {
  // The IPv6 block is for dual-stack cases; moto's default VPC (172.31/16) is never used.
  const vpc = await ec2.send(
    new CreateVpcCommand({ CidrBlock: '10.0.0.0/16', AmazonProvidedIpv6CidrBlock: true }),
  );
  const vpcId = vpc.Vpc!.VpcId!;
  const subnet = await ec2.send(
    new CreateSubnetCommand({ VpcId: vpcId, CidrBlock: '10.0.1.0/24', AvailabilityZone: ZONE }),
  );
  return { vpcId, subnetId: subnet.Subnet!.SubnetId! };
}

/** A route table, tagged `kubernetes.io/cluster/<cluster>=<value>` unless cluster is undefined. */
export async function createTable(
  ec2: EC2Client,
  vpcId: string,
  cluster: string | undefined,
  value = 'owned',
): Promise<string> {
  const tags = cluster === undefined ? [] : [{ Key: `kubernetes.io/cluster/${cluster}`, Value: value }];
  const table = await ec2.send(
    new CreateRouteTableCommand({
      VpcId: vpcId,
      ...(tags.length > 0 ? { TagSpecifications: [{ ResourceType: 'route-table', Tags: tags }] } : {}),
    }),
  );
  return table.RouteTable!.RouteTableId!;
}

export async function runInstances(
  ec2: EC2Client,
  subnetId: string,
  count: number,
): Promise<Ec2Fixture['instances']> {
  const run = await ec2.send(
    new RunInstancesCommand({
      ImageId: 'ami-12345678',
      MinCount: count,
      MaxCount: count,
      SubnetId: subnetId,
    }),
  );
  return run.Instances!.map((i) => ({ id: i.InstanceId!, privateIp: i.PrivateIpAddress! }));
}

export async function createFixture(
  ec2: EC2Client,
  cluster: string,
  instanceCount: number,
): Promise<Ec2Fixture> {
  const { vpcId, subnetId } = await createVpc(ec2);
  const tableId = await createTable(ec2, vpcId, cluster);
  return { vpcId, subnetId, tableId, instances: await runInstances(ec2, subnetId, instanceCount) };
}

/** Node `<prefix>-<i>` for instance i, pod CIDR 10.244.<i>.0/24. */
export function nodesFor(f: Pick<Ec2Fixture, 'instances'>, prefix = 'node'): Node[] {
  return f.instances.map((inst, i) => ({
    metadata: { name: `${prefix}-${i}`, uid: `uid-${prefix}-${i}` },
    spec: { providerID: `aws:///${ZONE}/${inst.id}`, podCIDRs: [`10.244.${i}.0/24`] },
    status: { addresses: [{ type: 'InternalIP', address: inst.privateIp }] },
  }));
}

/** The table as EC2 has it, bypassing the provider. */
export async function tableRoutes(ec2: EC2Client, tableId: string): Promise<Ec2Route[]> {
  const out = await ec2.send(
    new DescribeRouteTablesCommand({ Filters: [{ Name: 'route-table-id', Values: [tableId] }] }),
  );
  assert.equal(out.RouteTables?.length, 1);
  return out.RouteTables![0]!.Routes ?? [];
}

/** destination → instance or gateway ID. */
export function byDestination(routes: Ec2Route[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const r of routes) {
    out[r.DestinationCidrBlock ?? r.DestinationIpv6CidrBlock ?? '?'] = r.InstanceId ?? r.GatewayId ?? '?';
  }
  return out;
}
