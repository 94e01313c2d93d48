// R115, R118: the room of the Neutron router that holds the cluster's routes. Neutron counts
// every extra route of the router against one limit (max_routes in neutron.conf, default 30;
// from 2026.2 the quota_router_route quota), which its API does not report to a project's
// user, so the limit is the cloud config's [Route] max-routes.
import type { RouteTableRoom } from '../../core/types.ts';
import type { Router } from './neutron.ts';

/** Neutron's default `max_routes` (and `quota_router_route`). */
export const NEUTRON_DEFAULT_MAX_ROUTES = 30;

export function routerRoom(router: Router, maxRoutes = NEUTRON_DEFAULT_MAX_ROUTES): RouteTableRoom {
  return {
    container: `Neutron router ${router.id}`,
    limit: maxRoutes,
    used: router.routes.length,
    raise:
      'raise the router route limit (neutron.conf [DEFAULT] max_routes, or the quota_router_route quota from 2026.2: ' +
      'its router_route quota) and set [Route] max-routes in the cloud config to match',
  };
}
