// SPEC §9.1 TestReconcile (17 upstream cases), with strict assertions on the
// final route set, call counts and recorded condition patches.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { NodeSpecInput } from '../cluster/memory-cluster.ts';
import type { StoredRoute } from '../cloud/memory/memory-routes.ts';
import { harness, ip } from '../testing/harness.ts';

const T0 = new Date('2026-01-01T00:00:00Z');
const n1: NodeSpecInput = {
  name: 'node-1',
  uid: '01',
  podCIDRs: ['10.120.0.0/24'],
  addresses: ip('10.0.1.1'),
  creationTimestamp: T0,
};
const n2: NodeSpecInput = {
  name: 'node-2',
  uid: '02',
  podCIDRs: ['10.120.1.0/24'],
  addresses: ip('10.0.2.1'),
  creationTimestamp: T0,
};
const n2x: NodeSpecInput = { name: 'node-2', uid: '02', addresses: ip('10.0.5.1'), creationTimestamp: T0 };
const n3: NodeSpecInput = {
  name: 'node-3',
  uid: '03',
  podCIDRs: ['10.120.0.0/24', 'a00:100::/24'],
  addresses: ip('10.0.3.1'),
  creationTimestamp: T0,
};
const n4: NodeSpecInput = {
  name: 'node-4',
  uid: '04',
  podCIDRs: ['10.120.1.0/24', 'a00:200::/24'],
  addresses: ip('10.0.4.1'),
  creationTimestamp: T0,
};
const n4d: NodeSpecInput = { ...n4, podCIDRs: ['10.120.1.0/24', '10.120.1.0/24'] };
const DS = ['10.120.0.0/16', 'ace:cab:deca::/8'];

type R = Partial<StoredRoute> & { destinationCIDR: string };
const route = (targetNode: string, destinationCIDR: string, addr?: string): R => ({
  name: `${targetNode}-${destinationCIDR}`,
  targetNode,
  destinationCIDR,
  targetNodeAddresses: addr ? ip(addr) : [],
});

interface Case {
  name: string;
  nodes: NodeSpecInput[];
  routes: R[];
  ena?: boolean;
  ds?: boolean;
  expected: string[];
  creates?: number;
  deletes?: number;
  unpatched?: string[];
}

const correct3 = [route('node-3', '10.120.0.0/24', '10.0.3.1'), route('node-3', 'a00:100::/24', '10.0.3.1')];
const correct4 = [route('node-4', '10.120.1.0/24', '10.0.4.1'), route('node-4', 'a00:200::/24', '10.0.4.1')];
const ds34 = [
  '10.120.0.0/24->node-3[InternalIP=10.0.3.1]',
  '10.120.1.0/24->node-4[InternalIP=10.0.4.1]',
  'a00:100::/24->node-3[InternalIP=10.0.3.1]',
  'a00:200::/24->node-4[InternalIP=10.0.4.1]',
];
const ss12 = ['10.120.0.0/24->node-1[InternalIP=10.0.1.1]', '10.120.1.0/24->node-2[InternalIP=10.0.2.1]'];
const ok12 = [route('node-1', '10.120.0.0/24', '10.0.1.1'), route('node-2', '10.120.1.0/24', '10.0.2.1')];

const cases: Case[] = [
  {
    name: 'TR1 routes have no TargetNodeAddresses at the beginning',
    ds: true,
    ena: true,
    nodes: [n3, n4],
    routes: [
      route('node-3', '10.120.0.0/24'),
      route('node-3', 'a00:100::/24'),
      route('node-4', '10.120.1.0/24'),
      route('node-4', 'a00:200::/24'),
    ],
    expected: ds34,
    creates: 4,
    deletes: 4,
  },
  {
    name: "TR2 routes' TargetNodeAddresses changed",
    ds: true,
    ena: true,
    nodes: [n3, n4],
    routes: [
      route('node-3', '10.120.0.0/24', '10.0.13.1'),
      route('node-3', 'a00:100::/24', '10.0.13.1'),
      route('node-4', '10.120.1.0/24', '10.0.14.1'),
      route('node-4', 'a00:200::/24', '10.0.14.1'),
    ],
    expected: ds34,
    creates: 4,
    deletes: 4,
  },
  {
    name: 'TR3 multicidr 2 nodes and no routes',
    ds: true,
    nodes: [n3, n4],
    routes: [],
    expected: ds34,
    creates: 4,
    deletes: 0,
  },
  {
    name: 'TR4 multicidr 2 nodes and all routes created',
    ds: true,
    nodes: [n3, n4],
    routes: [...correct3, ...correct4],
    expected: ds34,
    creates: 0,
    deletes: 0,
  },
  {
    name: 'TR5 multicidr 2 nodes and few wrong routes',
    ds: true,
    nodes: [n3, n4],
    routes: [
      route('node-3', '10.120.1.0/24', '10.0.3.1'),
      route('node-3', 'a00:200::/24', '10.0.3.1'),
      route('node-4', '10.120.0.0/24', '10.0.4.1'),
      route('node-4', 'a00:100::/24', '10.0.4.1'),
    ],
    expected: ds34,
    creates: 4,
    deletes: 4,
  },
  {
    name: 'TR6 multicidr 2 nodes and some routes created',
    ds: true,
    nodes: [n3, n4],
    routes: [route('node-3', '10.120.0.0/24', '10.0.3.1'), route('node-4', 'a00:200::/24', '10.0.4.1')],
    expected: ds34,
    creates: 2,
    deletes: 0,
  },
  {
    name: 'TR7 multicidr 2 nodes and too many routes',
    ds: true,
    nodes: [n3, n4],
    routes: [...correct3, ...correct4, route('node-x', '10.120.2.0/24'), route('node-y', 'a00:300::/24')],
    expected: ds34,
    creates: 0,
    deletes: 2,
  },
  {
    name: 'TR8 single cidr 2 nodes and routes created',
    nodes: [n1, n2],
    routes: ok12,
    expected: ss12,
    creates: 0,
    deletes: 0,
  },
  {
    name: 'TR9 single cidr node ips changed so routes should be updated',
    ena: true,
    nodes: [n1, n2],
    routes: [route('node-1', '10.120.0.0/24', '10.0.1.2'), route('node-2', '10.120.1.0/24', '10.0.2.2')],
    expected: ss12,
    creates: 2,
    deletes: 2,
  },
  {
    name: 'TR10 single cidr 2 nodes and one route created',
    nodes: [n1, n2],
    routes: [ok12[0]!],
    expected: ss12,
    creates: 1,
    deletes: 0,
  },
  {
    name: 'TR11 single cidr 2 nodes and no routes',
    nodes: [n1, n2],
    routes: [],
    expected: ss12,
    creates: 2,
    deletes: 0,
  },
  {
    name: 'TR12 single cidr 2 nodes and too many routes',
    nodes: [n1, n2],
    routes: [...ok12, route('node-3', '10.120.2.0/24'), route('node-4', '10.120.3.0/24')],
    expected: ss12,
    creates: 0,
    deletes: 2,
  },
  {
    name: 'TR13 single cidr 2 nodes and 2 routes with 1 incorrect',
    nodes: [n1, n2],
    routes: [ok12[0]!, route('node-3', '10.120.2.0/24')],
    expected: ss12,
    creates: 1,
    deletes: 1,
  },
  {
    name: 'TR14 single cidr 2 nodes and one node without cidr assigned',
    nodes: [n1, n2x],
    routes: [],
    expected: ['10.120.0.0/24->node-1[InternalIP=10.0.1.1]'],
    creates: 1,
    deletes: 0,
    unpatched: ['node-2'],
  },
  {
    name: 'TR15 single cidr 2 nodes and an extra blackhole route in our range',
    nodes: [n1, n2],
    routes: [...ok12, { ...route('', '10.120.2.0/24'), blackhole: true }],
    expected: ss12,
    creates: 0,
    deletes: 1,
  },
  {
    name: 'TR16 single cidr 2 nodes and an extra blackhole route not in our range',
    nodes: [n1, n2],
    routes: [...ok12, { ...route('', '10.1.2.0/24'), blackhole: true }],
    expected: [...ss12, '10.1.2.0/24->(blackhole)[]'],
    creates: 0,
    deletes: 0,
  },
  {
    name: 'TR17 duplicate pod cidr',
    nodes: [n4d],
    routes: [],
    expected: ['10.120.1.0/24->node-4[InternalIP=10.0.4.1]'],
    creates: 1,
    deletes: 0,
  },
];

describe('TestReconcile (SPEC §9.1)', () => {
  for (const c of cases) {
    it(c.name, async () => {
      const h = harness({
        clusterCIDRs: c.ds ? DS : ['10.120.0.0/16'],
        nodes: c.nodes,
        routes: c.routes,
        cloud: { reportNodeAddresses: c.ena ?? false },
      });
      const report = await h.reconcile();
      assert.equal(report.outcome, (c.creates ?? 0) + (c.deletes ?? 0) > 0 ? 'changed' : 'noop');
      // Routes the cloud had before carry no addresses unless listed with them; compare with addresses.
      assert.deepEqual(h.routeSet(true), [...c.expected].sort());
      assert.equal(h.cloud.count('list'), 1);
      if (c.creates !== undefined) assert.equal(h.cloud.count('create'), c.creates, 'creates');
      if (c.deletes !== undefined) assert.equal(h.cloud.count('delete'), c.deletes, 'deletes');
      for (const n of c.nodes) {
        const patched = h.cluster.patches.filter((p) => p.node.name === n.name);
        if (c.unpatched?.includes(n.name)) {
          assert.equal(patched.length, 0, `${n.name} must not be patched`);
          continue;
        }
        assert.equal(patched.length, 1, `${n.name}: one patch`);
        assert.equal(patched[0]!.condition.status, 'False');
        assert.equal(patched[0]!.condition.reason, 'RouteCreated');
        assert.equal(patched[0]!.condition.message, 'RouteController created a route');
      }
      // R27: a create for D never starts before a delete of D in this reconcile ended.
      for (const cr of h.cloud.calls.filter((x) => x.op === 'create')) {
        for (const d of h.cloud.calls.filter(
          (x) => x.op === 'delete' && x.destinationCIDR === cr.destinationCIDR,
        )) {
          assert.ok(d.end <= cr.start);
          assert.ok(
            h.cloud.calls.indexOf(d) < h.cloud.calls.indexOf(cr),
            'delete of D starts before create of D',
          );
        }
      }
    });
  }
});
