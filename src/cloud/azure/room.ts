// R115, R118: the room of the Azure route table that holds the cluster's routes. Every route
// of the table counts against its limit: 1,000 user-defined routes per route table (Azure's
// networking limits since 2026; 400 before), whoever made it. The table's one PUT would be
// refused as a whole beyond it, so a create that does not fit is refused alone (R97).
import { QuotaExceededError } from '../../core/errors.ts';
import type { Route, RouteTableRoom } from '../../core/types.ts';
import type { EditOutcome, TableDraft } from './table.ts';

/** User-defined routes per route table (Azure subscription and service limits, networking). */
export const AZURE_DEFAULT_ROUTE_LIMIT = 1000;

const RAISE =
  "remove routes the table no longer needs, or move other routes to another route table: the limit is Azure's " +
  'networking limit of user-defined routes per route table (set "routeTableRouteLimit" in the cloud config if ' +
  'your table allows another number)';

/** How many routes the table held when listRoutes read it (0: not created yet). */
export class ListedCount {
  static readonly key = 'azure/listed-route-count';
  readonly count: number;
  constructor(count: number) {
    this.count = count;
  }
}

export function tableRoom(table: string, used: number, limit: number): RouteTableRoom {
  return { container: table, limit, used, raise: RAISE };
}

/** The draft's create, unless it would take the table beyond its limit (then refused alone). */
export function createWithinLimit(
  draft: TableDraft,
  route: Readonly<Route>,
  limit: number,
  table: string,
): EditOutcome {
  const before = [...draft.result()];
  const edit = draft.create(route);
  if (edit.kind !== 'changed' || draft.result().length <= limit) return edit;
  draft.restore(before);
  return {
    kind: 'failed',
    error: new QuotaExceededError(
      `${table} holds ${before.length} routes, its limit is ${limit}: no room for ${route.destinationCIDR} (node ${route.targetNode})`,
    ),
  };
}
