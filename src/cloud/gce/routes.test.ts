// GceRoutes against an in-memory ComputeApi double: the translation alone
// (filters, targets, 409/404 handling, operation errors, R4). The API's own
// behaviour is tested against MockGCE in test/integration/gce.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { errorKind } from '../../core/errors.ts';
import type { CallOptions, Node, NodeLister, Route } from '../../core/types.ts';
import type { ComputeApi, GceInstance, GceOperation, GceRoute } from './client.ts';
import { GceApiError } from './errors.ts';
import { GceRoutes, toRoute } from './routes.ts';
import { nodesByInstance } from './targets.ts';

const NET = 'https://www.googleapis.com/compute/v1/projects/net-proj/global/networks/k8s';
const hop = (name: string, zone = 'z-a'): string =>
  `https://www.googleapis.com/compute/v1/projects/vm-proj/zones/${zone}/instances/${name}`;

class Api implements ComputeApi {
  routes = new Map<string, GceRoute>();
  calls: string[] = [];
  opError: GceOperation['error'] | undefined;
  async listRoutes(project: string, filter: string): Promise<GceRoute[]> {
    this.calls.push(`list ${project} ${filter}`);
    return [...this.routes.values()];
  }
  async getRoute(project: string, name: string): Promise<GceRoute> {
    this.calls.push(`get ${project} ${name}`);
    const r = this.routes.get(name);
    if (r === undefined) throw new GceApiError('not found', 404, 'notFound');
    return r;
  }
  async insertRoute(project: string, route: GceRoute): Promise<GceOperation> {
    this.calls.push(`insert ${project} ${route.name} ${route.nextHopInstance}`);
    if (this.routes.has(route.name)) throw new GceApiError('exists', 409, 'alreadyExists');
    if (this.opError === undefined) this.routes.set(route.name, route);
    return { name: 'op', status: 'PENDING' };
  }
  async deleteRoute(project: string, name: string): Promise<GceOperation> {
    this.calls.push(`delete ${project} ${name}`);
    if (!this.routes.delete(name)) throw new GceApiError('not found', 404, 'notFound');
    return { name: 'op', status: 'PENDING' };
  }
  /** `zone/name` of the instances that exist; undefined: every instance asked for exists. */
  instances: Set<string> | undefined;
  zones: string[] = [];
  async getInstance(project: string, zone: string, name: string): Promise<GceInstance> {
    this.calls.push(`instance ${project} ${zone} ${name}`);
    if (this.instances !== undefined && !this.instances.has(`${zone}/${name}`))
      throw new GceApiError(
        `The resource 'projects/${project}/zones/${zone}/instances/${name}' was not found`,
        404,
        'notFound',
      );
    return { name, selfLink: hop(name, zone) };
  }
  async listZones(project: string, region: string): Promise<string[]> {
    this.calls.push(`zones ${project} ${region}`);
    return [...this.zones];
  }
  async waitOperation(_p: string, op: GceOperation): Promise<GceOperation> {
    return {
      ...op,
      status: 'DONE',
      ...(this.opError ? { error: this.opError, httpErrorStatusCode: 403 } : {}),
    };
  }
}

const node = (name: string, providerID?: string): Node => ({
  metadata: { name, uid: `uid-${name}` },
  spec: { podCIDRs: ['10.244.1.0/24'], ...(providerID ? { providerID } : {}) },
});
const NODES = [node('a', 'gce://vm-proj/z-a/vm-a'), node('b'), node('moved', 'gce://vm-proj/z-b/moved')];
const lister: NodeLister = { get: (n) => NODES.find((x) => x.metadata?.name === n), list: () => NODES };
const opts = (signal = new AbortController().signal): CallOptions => ({
  signal,
  reconcile: { id: 'r', scratch: new Map() },
});
const want = (targetNode: string, destinationCIDR: string): Route => ({
  name: '',
  targetNode,
  targetNodeAddresses: [],
  enableNodeAddresses: false,
  destinationCIDR,
  blackhole: false,
});
const CONFIG = {
  projectID: 'vm-proj',
  networkProjectID: 'net-proj',
  networkName: 'k8s',
  networkURL: NET,
  localZone: 'z-a',
};

describe('GceRoutes', () => {
  test('creates in the network project, next hop from providerID, else by name in local-zone', async () => {
    const api = new Api();
    const routes = new GceRoutes(api, CONFIG, lister);
    await routes.createRoute('kubernetes', 'uid-a', want('a', '10.244.1.0/24'), opts());
    await routes.createRoute('kubernetes', 'uid-b', want('b', '10.244.2.0/24'), opts());
    assert.deepEqual(api.calls, [
      'insert net-proj kubernetes-uid-a projects/vm-proj/zones/z-a/instances/vm-a',
      'instance vm-proj z-a b',
      'insert net-proj kubernetes-uid-b projects/vm-proj/zones/z-a/instances/b',
    ]);
  });

  test('toRoute: by providerID, else by name; a moved instance or a missing one is a blackhole', () => {
    const by = nodesByInstance(lister);
    const r = (name: string, instance: string, warnings: GceRoute['warnings'] = []): Route =>
      toRoute(
        { name, destRange: '10.244.1.0/24', network: NET, nextHopInstance: instance, warnings },
        lister,
        by,
      );
    assert.deepEqual([r('x', hop('vm-a')).targetNode, r('x', hop('vm-a')).blackhole], ['a', false]);
    assert.deepEqual([r('x', hop('b')).targetNode, r('x', hop('b')).blackhole], ['b', false]);
    // Named like node "moved", but its providerID names the instance in z-b.
    assert.deepEqual(
      [r('x', hop('moved', 'z-a')).targetNode, r('x', hop('moved', 'z-a')).blackhole],
      ['moved', true],
    );
    const gone = r('x', hop('vm-a'), [{ code: 'NEXT_HOP_INSTANCE_NOT_FOUND' }]);
    assert.deepEqual([gone.targetNode, gone.blackhole], ['a', true]);
    assert.deepEqual([r('x', hop('nobody')).targetNode, r('x', hop('nobody')).blackhole], ['', false]);
  });

  test('listRoutes re-applies the filter: wrong prefix, description, network or next hop are not listed', async () => {
    const api = new Api();
    const add = (name: string, extra: Partial<GceRoute> = {}): void =>
      void api.routes.set(name, {
        name,
        destRange: '10.244.9.0/24',
        network: NET,
        nextHopInstance: hop('vm-a'),
        description: 'k8s-node-route',
        ...extra,
      });
    add('kubernetes-ok');
    add('kubernetesx-1');
    add('kubernetes-desc', { description: 'mine' });
    add('kubernetes-net', { network: NET.replace('net-proj', 'other') });
    add('kubernetes-ip', { nextHopInstance: undefined, nextHopIp: '10.0.0.1' });
    const routes = new GceRoutes(api, CONFIG, lister);
    assert.deepEqual(
      (await routes.listRoutes('kubernetes', opts())).map((r) => r.name),
      ['kubernetes-ok'],
    );
    assert.match(
      api.calls[0]!,
      /^list net-proj \(name eq kubernetes-\.\*\) \(network eq \.\*\/projects\/net-proj\/global\/networks\/k8s\) \(description eq k8s-node-route\)$/,
    );
  });

  test('an operation error is the call error; 404 on delete is success; an aborted signal makes no call', async () => {
    const api = new Api();
    const routes = new GceRoutes(api, CONFIG, lister);
    api.opError = { errors: [{ code: 'QUOTA_EXCEEDED', message: "Quota 'ROUTES' exceeded." }] };
    await assert.rejects(
      routes.createRoute('kubernetes', 'uid-a', want('a', '10.244.1.0/24'), opts()),
      (e: Error) => errorKind(e) === 'quota_exceeded',
    );
    await routes.deleteRoute(
      'kubernetes',
      { ...want('a', '10.244.1.0/24'), name: 'kubernetes-gone' },
      opts(),
    );
    const ac = new AbortController();
    ac.abort();
    const before = api.calls.length;
    await assert.rejects(
      routes.createRoute('kubernetes', 'uid-a', want('a', '10.244.1.0/24'), opts(ac.signal)),
      { name: 'AbortError' },
    );
    await assert.rejects(routes.listRoutes('kubernetes', opts(ac.signal)), { name: 'AbortError' });
    assert.equal(api.calls.length, before);
    await assert.rejects(
      routes.createRoute('kubernetes', 'uid-a', want('a', 'not-a-cidr'), opts()),
      (e: Error) => errorKind(e) === 'permanent',
    );
  });

  test('multizone: a node without providerID is searched in every zone of the region, the zones listed again when it is in none', async () => {
    const api = new Api();
    api.zones = ['r1-b', 'r1-c'];
    api.instances = new Set(['r1-c/b', 'r1-d/c']);
    const nodes = [node('b'), node('c.example.internal'), node('gone')];
    const byName: NodeLister = { get: (n) => nodes.find((x) => x.metadata?.name === n), list: () => nodes };
    const routes = new GceRoutes(
      api,
      { ...CONFIG, localZone: 'r1-b', multizone: true, region: 'r1' },
      byName,
    );
    await routes.createRoute('kubernetes', 'uid-b', want('b', '10.244.2.0/24'), opts());
    assert.deepEqual(api.calls, [
      'zones vm-proj r1',
      'instance vm-proj r1-b b',
      'instance vm-proj r1-c b',
      'insert net-proj kubernetes-uid-b projects/vm-proj/zones/r1-c/instances/b',
    ]);
    // A zone added to the region since the list: not found in the known ones, listed again, found there.
    api.calls = [];
    api.zones = ['r1-b', 'r1-c', 'r1-d'];
    await routes.createRoute('kubernetes', 'uid-c', want('c.example.internal', '10.244.3.0/24'), opts());
    assert.deepEqual(api.calls, [
      'instance vm-proj r1-b c',
      'instance vm-proj r1-c c',
      'zones vm-proj r1',
      'instance vm-proj r1-d c',
      'insert net-proj kubernetes-uid-c projects/vm-proj/zones/r1-d/instances/c',
    ]);
    // In no zone at all: permanent, naming the zones searched, and nothing inserted.
    api.calls = [];
    await assert.rejects(
      routes.createRoute('kubernetes', 'uid-gone', want('gone', '10.244.4.0/24'), opts()),
      (e: Error) =>
        errorKind(e) === 'permanent' &&
        /no instance gone is in any zone of region r1 \(r1-b, r1-c, r1-d\)/.test(e.message),
    );
    assert.ok(!api.calls.some((c) => c.startsWith('insert')), api.calls.join('\n'));
  });

  test('single zone: a node without providerID is looked up in local-zone only; an instance elsewhere is not found', async () => {
    const api = new Api();
    api.instances = new Set(['r1-c/b']);
    const routes = new GceRoutes(api, { ...CONFIG, localZone: 'r1-b' }, lister);
    await assert.rejects(
      routes.createRoute('kubernetes', 'uid-b', want('b', '10.244.2.0/24'), opts()),
      (e: Error) => errorKind(e) === 'permanent' && /no instance b in zone r1-b/.test(e.message),
    );
    assert.deepEqual(api.calls, ['instance vm-proj r1-b b']);
  });
});
