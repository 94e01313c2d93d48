// R115, R118: the openstack plug-in's router room and its [Route] max-routes key.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseOpenStackConfig } from './config.ts';
import { NEUTRON_DEFAULT_MAX_ROUTES, routerRoom } from './room.ts';

const conf = (route: string): string =>
  `[Global]\nauth-url = https://k:5000\nusername = u\npassword = p\nuser-domain-name = D\ntenant-id = t\n[Route]\nrouter-id = r1\n${route}`;
const env = { env: {}, exists: () => false, readFile: () => '' };

describe('openstack: router room', () => {
  test('every extra route of the router against max-routes, default Neutron’s 30', () => {
    const router = { id: 'r1', revision: 3, routes: [{ destination: '10.244.1.0/24', nexthop: '10.0.0.1' }] };
    assert.equal(NEUTRON_DEFAULT_MAX_ROUTES, 30);
    const room = routerRoom(router);
    assert.deepEqual([room.container, room.limit, room.used], ['Neutron router r1', 30, 1]);
    assert.equal(routerRoom(router, 5).limit, 5);
  });

  test('[Route] max-routes: a whole number of at least 1', () => {
    assert.equal(parseOpenStackConfig(conf('max-routes = 12\n'), env).maxRoutes, 12);
    assert.equal(parseOpenStackConfig(conf(''), env).maxRoutes, undefined);
    assert.throws(
      () => parseOpenStackConfig(conf('max-routes = 0\n'), env),
      /"max-routes" must be a whole number of at least 1/,
    );
  });
});
