import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { nodeUpdateTrigger } from '../core/trigger-filter.ts';
import { ConditionExpectations } from '../core/expectations.ts';
import { diffCaches, informerBackoffMs, transformNode, type CachedNode } from './node-cache.ts';

/** A node as a kubelet and the control plane leave it (trimmed lists, real shape). */
function kubeletNode(name: string, over: { rv?: string; uid?: string; cidrs?: string[] } = {}): object {
  const cidrs = over.cidrs ?? ['10.244.1.0/24', 'fd00::/64'];
  return {
    kind: 'Node',
    apiVersion: 'v1',
    metadata: {
      name,
      uid: over.uid ?? `uid-${name}`,
      resourceVersion: over.rv ?? '100',
      creationTimestamp: '2026-01-01T00:00:00Z',
      labels: { 'kubernetes.io/hostname': name, 'node.kubernetes.io/instance-type': 'm5.large' },
      annotations: {
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
      },
      managedFields: [
        {
          manager: 'kubelet',
          operation: 'Update',
          apiVersion: 'v1',
          time: '2026-01-01T00:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:status': {} },
        },
      ],
    },
    spec: {
      podCIDR: cidrs[0],
      podCIDRs: cidrs,
      providerID: `aws:///us-east-1a/i-${name}`,
      taints: [{ key: 'k', effect: 'NoSchedule' }],
    },
    status: {
      capacity: { cpu: '2', memory: '8Gi', pods: '110' },
      allocatable: { cpu: '2', memory: '7Gi', pods: '110' },
      conditions: [
        {
          type: 'MemoryPressure',
          status: 'False',
          reason: 'KubeletHasSufficientMemory',
          lastHeartbeatTime: '2026-01-01T00:00:00Z',
        },
        {
          type: 'NetworkUnavailable',
          status: 'False',
          reason: 'RouteCreated',
          message: 'RouteController created a route',
          lastTransitionTime: '2026-01-01T00:00:00Z',
          lastHeartbeatTime: '2026-01-01T00:00:00Z',
        },
        { type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: '2026-01-01T00:05:00Z' },
      ],
      addresses: [
        { type: 'InternalIP', address: '10.0.1.10' },
        { type: 'Hostname', address: name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: { kubeletVersion: 'v1.36.3', osImage: 'Ubuntu' },
      images: [{ names: ['registry.k8s.io/pause:3.10'], sizeBytes: 320368 }],
    },
  };
}

describe('transformNode (R58)', () => {
  test('keeps exactly what the controller reads', () => {
    assert.deepEqual(transformNode(kubeletNode('n1')), {
      metadata: {
        name: 'n1',
        uid: 'uid-n1',
        resourceVersion: '100',
        creationTimestamp: '2026-01-01T00:00:00Z',
      },
      spec: {
        podCIDRs: ['10.244.1.0/24', 'fd00::/64'],
        podCIDR: '10.244.1.0/24',
        providerID: 'aws:///us-east-1a/i-n1',
      },
      status: {
        addresses: [
          { type: 'InternalIP', address: '10.0.1.10' },
          { type: 'Hostname', address: 'n1' },
        ],
        conditions: [
          {
            type: 'NetworkUnavailable',
            status: 'False',
            reason: 'RouteCreated',
            message: 'RouteController created a route',
            lastTransitionTime: '2026-01-01T00:00:00Z',
            lastHeartbeatTime: '2026-01-01T00:00:00Z',
          },
        ],
      },
    });
  });

  test('a node without spec, status or NetworkUnavailable stays minimal', () => {
    const n = transformNode({
      metadata: { name: 'bare', uid: 'u', resourceVersion: '1' },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    });
    assert.deepEqual(n, {
      metadata: { name: 'bare', uid: 'u', resourceVersion: '1', creationTimestamp: undefined },
      status: {},
    });
  });

  test('rejects objects that are not usable nodes', () => {
    for (const bad of [
      null,
      undefined,
      'x',
      1,
      [],
      {},
      { metadata: {} },
      { metadata: { name: '' } },
      { metadata: { name: 5 } },
    ]) {
      assert.equal(transformNode(bad), undefined, JSON.stringify(bad));
    }
  });

  test('drops malformed entries instead of caching them', () => {
    const n = transformNode({
      metadata: { name: 'm' },
      spec: { podCIDRs: ['10.0.0.0/24', 7, null] },
      status: { addresses: [{ type: 'InternalIP' }, { type: 'InternalIP', address: '1.2.3.4' }, 'x'] },
    });
    assert.deepEqual(n?.spec?.podCIDRs, ['10.0.0.0/24']);
    assert.deepEqual(n?.status?.addresses, [{ type: 'InternalIP', address: '1.2.3.4' }]);
  });

  test('the R41 filter gives the same answer on stripped and full objects', () => {
    const exp = new ConditionExpectations();
    const base = kubeletNode('n1', { rv: '1' }) as {
      status: { conditions: { type: string; lastHeartbeatTime?: string }[] };
    };
    const heartbeat = structuredClone(base) as typeof base & { metadata: { resourceVersion: string } };
    heartbeat.metadata.resourceVersion = '2';
    heartbeat.status.conditions[2]!.lastHeartbeatTime = '2026-01-01T00:10:00Z';
    const full = nodeUpdateTrigger(base as never, heartbeat as never, exp);
    const stripped = nodeUpdateTrigger(transformNode(base)!, transformNode(heartbeat)!, exp);
    assert.equal(full, undefined);
    assert.equal(stripped, undefined);
    const moved = structuredClone(heartbeat) as typeof heartbeat & {
      status: { addresses: { address: string }[] };
    };
    moved.metadata.resourceVersion = '3';
    moved.status.addresses[0]!.address = '10.0.1.11';
    assert.equal(nodeUpdateTrigger(transformNode(heartbeat)!, transformNode(moved)!, exp), 'node_change');
  });
});

function cache(...nodes: [string, string, string][]): Map<string, CachedNode> {
  return new Map(nodes.map(([name, uid, rv]) => [name, { metadata: { name, uid, resourceVersion: rv } }]));
}

describe('diffCaches (R55)', () => {
  test('adds, updates only on a new resourceVersion, deletes as tombstones', () => {
    const old = cache(['a', 'ua', '1'], ['b', 'ub', '2'], ['c', 'uc', '3']);
    const next = cache(['a', 'ua', '1'], ['b', 'ub', '5'], ['d', 'ud', '6']);
    const d = diffCaches(old, next);
    assert.deepEqual(
      d.adds.map((n) => n.metadata?.name),
      ['d'],
    );
    assert.deepEqual(
      d.updates.map((u) => [u.oldNode.metadata?.resourceVersion, u.newNode.metadata?.resourceVersion]),
      [['2', '5']],
    );
    assert.deepEqual(
      d.deletes.map((n) => n.metadata?.name),
      ['c'],
    );
  });

  test('a name with a new uid is a delete of the old node and an add of the new one', () => {
    const d = diffCaches(cache(['a', 'u1', '1']), cache(['a', 'u2', '9']));
    assert.deepEqual(
      d.deletes.map((n) => n.metadata?.uid),
      ['u1'],
    );
    assert.deepEqual(
      d.adds.map((n) => n.metadata?.uid),
      ['u2'],
    );
    assert.equal(d.updates.length, 0);
  });

  test('identical caches give no difference', () => {
    const d = diffCaches(cache(['a', 'u', '1']), cache(['a', 'u', '1']));
    assert.deepEqual([d.adds.length, d.updates.length, d.deletes.length], [0, 0, 0]);
  });
});

describe('informerBackoffMs (R54)', () => {
  test('1 s doubling to a 30 s cap, ±10 %', () => {
    const mid = (): number => 0.5;
    assert.deepEqual(
      [1, 2, 3, 4, 5, 6, 7, 20].map((n) => informerBackoffMs(n, mid)),
      [1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000],
    );
    assert.equal(
      informerBackoffMs(1, () => 0),
      900,
    );
    assert.ok(informerBackoffMs(1, () => 0.999999) < 1100);
    assert.ok(informerBackoffMs(9, () => 0.999999) < 33_000);
  });

  test('never shorter than Retry-After (bounded at 10 min)', () => {
    assert.equal(
      informerBackoffMs(1, () => 0.5, {}, 7000),
      7000,
    );
    assert.equal(
      informerBackoffMs(6, () => 0.5, {}, 7000),
      30_000,
    );
    assert.equal(
      informerBackoffMs(1, () => 0.5, {}, 3_600_000),
      600_000,
    );
  });

  test('configurable bounds', () => {
    assert.equal(
      informerBackoffMs(3, () => 0.5, { initialMs: 10, maxMs: 25 }),
      25,
    );
  });
});
