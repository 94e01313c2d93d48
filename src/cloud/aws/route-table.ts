// The VPC route table that holds the cluster's routes: by the configured ID, else by the
// cluster's tag (or the legacy KubernetesCluster tag), exactly one; for an INI
// (cloud-provider-aws) config, as that CCM finds it (R121). routes.ts looks it up once per
// reconcile.
import { DescribeRouteTablesCommand } from './ec2.ts';
import type { EC2Client, Ec2Route, Filter, RouteTable } from './ec2.ts';
import { PermanentError, RetryableError } from '../../core/errors.ts';
import type { AwsCloudConfig } from './config.ts';
import { ec2Call } from './errors.ts';
import { destinationText, sameDestination, type Destination } from './targets.ts';

export const CLUSTER_TAG_PREFIX = 'kubernetes.io/cluster/';
/** The tag older (kops) clusters carry, `KubernetesCluster=<cluster ID>` (R121). */
export const LEGACY_CLUSTER_TAG = 'KubernetesCluster';

/** What the lookup needs from the cloud config. */
export type RouteTableConfig = Pick<AwsCloudConfig, 'routeTableId' | 'vpcId'> & {
  /**
   * An INI (cloud-provider-aws) config: the table is chosen as that CCM chooses it (R121),
   * by RouteTableID alone, else by this cluster ID's tags, whatever --cluster-name says.
   */
  readonly upstreamClusterID?: () => Promise<string>;
};

/** The cluster's table as DescribeRouteTables returned it. */
export interface FoundTable {
  readonly id: string;
  readonly routes: Ec2Route[];
}

type DescribeInput = { RouteTableIds?: string[]; Filters?: Filter[] };

export class RouteTableLookup {
  private readonly client: EC2Client;
  private readonly config: RouteTableConfig;

  constructor(client: EC2Client, config: RouteTableConfig) {
    this.client = client;
    this.config = config;
  }

  /** The cluster's table with its routes: by configured ID, else by cluster tag; exactly one. */
  async find(clusterName: string, signal: AbortSignal): Promise<FoundTable> {
    if (this.config.upstreamClusterID) return this.findUpstream(signal);
    const { routeTableId, vpcId } = this.config;
    const filters: Filter[] = vpcId ? [{ Name: 'vpc-id', Values: [vpcId] }] : [];
    const inVpc = vpcId ? ` in ${vpcId}` : '';
    let tables: RouteTable[];
    let wanted: string;
    if (routeTableId) {
      wanted = `route table ${routeTableId}${inVpc}`;
      tables = await this.describe(
        { RouteTableIds: [routeTableId], Filters: filters },
        `DescribeRouteTables ${routeTableId}`,
        signal,
      );
    } else {
      const tag = `${CLUSTER_TAG_PREFIX}${clusterName}`;
      wanted = `route table tagged ${tag}=owned|shared${inVpc}`;
      tables = await this.findTagged(tag, filters, clusterName, signal);
    }
    if (tables.length === 0) {
      const hint = routeTableId
        ? 'check routeTableId and vpcId in the cloud config'
        : 'tag the cluster route table or set routeTableId in the cloud config';
      throw new PermanentError(`no ${wanted} for cluster ${clusterName}: ${hint}`);
    }
    if (tables.length > 1) {
      const ids = tables.map((t) => t.RouteTableId ?? '?').join(', ');
      throw new PermanentError(
        `found ${tables.length} of ${wanted} for cluster ${clusterName} (${ids}); set routeTableId in the cloud config to choose one`,
      );
    }
    return foundTable(tables[0]!);
  }

  /** The route of `destination` in the table, as EC2 reports it now. */
  async findRoute(
    tableId: string,
    destination: Destination,
    signal: AbortSignal,
  ): Promise<Ec2Route | undefined> {
    const [table] = await this.describe(
      { RouteTableIds: [tableId] },
      `DescribeRouteTables ${tableId}`,
      signal,
    );
    const wanted = destinationText(destination);
    return table?.Routes?.find((r) => {
      const d = r.DestinationCidrBlock ?? r.DestinationIpv6CidrBlock;
      return d !== undefined && sameDestination(wanted, d);
    });
  }

  /** Tables tagged `tag=owned|shared`, else (R121) those with only the legacy tag. */
  private async findTagged(
    tag: string,
    filters: readonly Filter[],
    clusterName: string,
    signal: AbortSignal,
  ): Promise<RouteTable[]> {
    const tables = await this.describe(
      { Filters: [...filters, { Name: `tag:${tag}`, Values: ['owned', 'shared'] }] },
      `DescribeRouteTables tag ${tag}`,
      signal,
    );
    if (tables.length > 0) return tables;
    // R121: older clusters carry only the legacy tag; asked for only when the new one is absent.
    const legacy = `tag:${LEGACY_CLUSTER_TAG}`;
    return this.describe(
      { Filters: [...filters, { Name: legacy, Values: [clusterName] }] },
      `DescribeRouteTables tag ${LEGACY_CLUSTER_TAG}=${clusterName}`,
      signal,
    );
  }

  /**
   * cloud-provider-aws v1.37.1 findRouteTable (aws_routes.go): RouteTableID as a
   * `route-table-id` filter, else every table carrying the cluster ID's tag (any value) or
   * the legacy `KubernetesCluster=<id>`; no VPC filter; exactly one. Upstream lists all
   * tables and filters them itself; the tag-key filter asks EC2 for the same candidates.
   */
  private async findUpstream(signal: AbortSignal): Promise<FoundTable> {
    const { routeTableId } = this.config;
    let tables: RouteTable[];
    let wanted: string;
    if (routeTableId) {
      wanted = `route table ${routeTableId}`;
      tables = await this.describe(
        { Filters: [{ Name: 'route-table-id', Values: [routeTableId] }] },
        `DescribeRouteTables ${routeTableId}`,
        signal,
      );
    } else {
      const clusterID = await this.config.upstreamClusterID!();
      const key = `${CLUSTER_TAG_PREFIX}${clusterID}`;
      wanted = `route table tagged ${key} or ${LEGACY_CLUSTER_TAG}=${clusterID}`;
      const candidates = await this.describe(
        { Filters: [{ Name: 'tag-key', Values: [key, LEGACY_CLUSTER_TAG] }] },
        `DescribeRouteTables tag ${key}`,
        signal,
      );
      tables = candidates.filter((t) => hasClusterTag(t.Tags ?? [], clusterID));
    }
    if (tables.length === 0) {
      throw new PermanentError(
        `unable to find ${wanted}: ${routeTableId ? 'check RouteTableID' : 'tag the cluster route table or set RouteTableID'} in the cloud config`,
      );
    }
    if (tables.length > 1) {
      const ids = tables.map((t) => t.RouteTableId ?? '?').join(', ');
      throw new PermanentError(
        `found ${tables.length} of ${wanted} (${ids}); set RouteTableID in the cloud config to choose one`,
      );
    }
    return foundTable(tables[0]!);
  }

  /** Every page of DescribeRouteTables. */
  private async describe(input: DescribeInput, what: string, signal: AbortSignal): Promise<RouteTable[]> {
    const tables: RouteTable[] = [];
    let token: string | undefined;
    do {
      const page = await ec2Call(what, signal, () =>
        this.client.send(new DescribeRouteTablesCommand({ ...input, NextToken: token }), {
          abortSignal: signal,
        }),
      );
      tables.push(...(page.RouteTables ?? []));
      token = page.NextToken || undefined;
    } while (token !== undefined);
    return tables;
  }
}

function foundTable(table: RouteTable): FoundTable {
  if (!table.RouteTableId) throw new RetryableError(`DescribeRouteTables returned a table without an ID`);
  return { id: table.RouteTableId, routes: table.Routes ?? [] };
}

/** upstream awsTagging.hasClusterTag: the cluster's tag key with any value, or the legacy tag's value. */
export function hasClusterTag(tags: readonly { Key?: string; Value?: string }[], clusterID: string): boolean {
  const key = `${CLUSTER_TAG_PREFIX}${clusterID}`;
  return tags.some((t) => t.Key === key || (t.Key === LEGACY_CLUSTER_TAG && t.Value === clusterID));
}
