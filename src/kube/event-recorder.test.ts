import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { VirtualClock } from '../core/clock.ts';
import { MemoryLogger } from '../core/ports.ts';
import { KubeEventRecorder } from './event-recorder.ts';
import { KubeApiError, KubeRequestError, type KubeRequestOptions, type KubeResponse } from './kube-client.ts';
import { KubeNodeStatusWriter, conditionPatch } from './node-status-writer.ts';

interface Call {
  path: string;
  method: string;
  body: Record<string, unknown>;
  contentType: string | undefined;
}

/** Records requests; `fail` decides per call whether to throw. */
class FakeApi {
  readonly calls: Call[] = [];
  fail: (c: Call) => Error | undefined = () => undefined;
  private rv = 0;
  async requestJson(path: string, o: KubeRequestOptions = {}): Promise<unknown> {
    const call = {
      path,
      method: o.method ?? 'GET',
      body: (o.body ?? {}) as Record<string, unknown>,
      contentType: o.contentType,
    };
    this.calls.push(call);
    const err = this.fail(call);
    if (err) throw err;
    const md = (call.body['metadata'] ?? {}) as Record<string, unknown>;
    return {
      ...call.body,
      metadata: { ...md, name: md['name'] ?? path.split('/').at(-1), resourceVersion: String(++this.rv) },
    };
  }
  async request(path: string, o: KubeRequestOptions = {}): Promise<KubeResponse> {
    await this.requestJson(path, o);
    return { status: 200, headers: {}, body: '' };
  }
}

function setup() {
  const clock = new VirtualClock();
  const api = new FakeApi();
  const logger = new MemoryLogger(10);
  const rec = new KubeEventRecorder({ client: api, clock, logger, host: 'host-1', random: () => 0.5 });
  return { clock, api, logger, rec };
}

const node = { name: 'n1', uid: 'uid-1' };

describe('KubeEventRecorder', () => {
  test('creates a core/v1 Event in default about the Node', async () => {
    const { api, rec, clock } = setup();
    rec.event(node, 'Warning', 'FailedToCreateRoute', 'Could not create route');
    await rec.flush();
    assert.equal(api.calls.length, 1);
    const c = api.calls[0]!;
    assert.equal(c.method, 'POST');
    assert.equal(c.path, '/api/v1/namespaces/default/events');
    const ts = new Date(clock.now()).toISOString().replace(/\.\d+Z$/, 'Z');
    const { metadata, ...rest } = c.body as { metadata: { name: string; namespace: string } };
    assert.match(metadata.name, /^n1\.[0-9a-f]+$/);
    assert.equal(metadata.namespace, 'default');
    assert.deepEqual(rest, {
      apiVersion: 'v1',
      kind: 'Event',
      involvedObject: { apiVersion: 'v1', kind: 'Node', name: 'n1', uid: 'uid-1' },
      reason: 'FailedToCreateRoute',
      message: 'Could not create route',
      type: 'Warning',
      source: { component: 'route_controller', host: 'host-1' },
      reportingComponent: 'route_controller',
      reportingInstance: 'host-1',
      firstTimestamp: ts,
      lastTimestamp: ts,
      count: 1,
    });
  });

  test('an identical repeat patches count and lastTimestamp of the created event', async () => {
    const { api, rec, clock } = setup();
    rec.event(node, 'Warning', 'R', 'same');
    await clock.advance(5000);
    rec.event(node, 'Warning', 'R', 'same');
    await rec.flush();
    const [create, patch] = api.calls;
    assert.equal(patch?.method, 'PATCH');
    assert.equal(patch?.contentType, 'application/strategic-merge-patch+json');
    assert.equal(
      patch?.path,
      `/api/v1/namespaces/default/events/${(create!.body['metadata'] as { name: string }).name}`,
    );
    assert.deepEqual(patch?.body, {
      count: 2,
      lastTimestamp: new Date(clock.now()).toISOString().replace(/\.\d+Z$/, 'Z'),
      message: 'same',
    });
  });

  test('a patch of an expired event (404) creates it again', async () => {
    const { api, rec } = setup();
    rec.event(node, 'Warning', 'R', 'same');
    await rec.flush();
    api.fail = (c) => (c.method === 'PATCH' ? new KubeApiError(404, 'events "x" not found') : undefined);
    rec.event(node, 'Warning', 'R', 'same');
    await rec.flush();
    assert.deepEqual(
      api.calls.map((c) => c.method),
      ['POST', 'PATCH', 'POST'],
    );
    assert.equal(api.calls[2]!.body['count'], 2);
    assert.equal((api.calls[2]!.body['metadata'] as Record<string, unknown>)['resourceVersion'], undefined);
  });

  test('rejections are logged, not retried, never thrown; transport errors are retried', async () => {
    const { api, rec, logger, clock } = setup();
    api.fail = () => new KubeApiError(403, 'events is forbidden');
    assert.doesNotThrow(() => rec.event(node, 'Warning', 'R', 'a'));
    await rec.flush();
    assert.equal(api.calls.length, 1);
    assert.ok(logger.records.some((r) => r.level === 'error' && r.msg.includes('will not retry')));
    let n = 0;
    api.fail = () => (++n <= 2 ? new KubeRequestError('ECONNREFUSED') : undefined);
    rec.event(node, 'Warning', 'R', 'b');
    await clock.advance(0);
    assert.equal(api.calls.length, 2);
    await clock.advance(5000); // first retry after 10 s × random()
    assert.equal(api.calls.length, 3);
    await clock.advance(10_000);
    assert.equal(api.calls.length, 4);
    await rec.flush();
    assert.equal(api.calls.at(-1)!.method, 'POST');
  });

  test('the spam filter stops writes after 25 events about one node', async () => {
    const { api, rec } = setup();
    for (let i = 0; i < 40; i++) rec.event(node, 'Warning', `R${i % 2}`, `m${i}`);
    await rec.flush();
    assert.equal(api.calls.length, 25);
  });

  test('close stops pending retries', async () => {
    const { api, rec, clock } = setup();
    api.fail = () => new KubeRequestError('down');
    rec.event(node, 'Warning', 'R', 'x');
    await clock.advance(0);
    await rec.close();
    rec.event(node, 'Warning', 'R', 'y');
    await clock.advance(60_000);
    assert.equal(api.calls.length, 1);
  });
});

describe('KubeNodeStatusWriter', () => {
  test('strategic merge patch of nodes/<name>/status with RFC 3339 times', async () => {
    const api = new FakeApi();
    const w = new KubeNodeStatusWriter(api);
    const t = new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678));
    await w.patchNodeCondition(
      node,
      {
        type: 'NetworkUnavailable',
        status: 'False',
        reason: 'RouteCreated',
        message: 'RouteController created a route',
        lastTransitionTime: t,
        lastHeartbeatTime: t,
      },
      new AbortController().signal,
    );
    assert.deepEqual(api.calls, [
      {
        path: '/api/v1/nodes/n1/status',
        method: 'PATCH',
        contentType: 'application/strategic-merge-patch+json',
        body: {
          status: {
            conditions: [
              {
                type: 'NetworkUnavailable',
                status: 'False',
                reason: 'RouteCreated',
                message: 'RouteController created a route',
                lastTransitionTime: '2026-01-02T03:04:05Z',
                lastHeartbeatTime: '2026-01-02T03:04:05Z',
              },
            ],
          },
        },
      },
    ]);
    assert.deepEqual(conditionPatch({ type: 'X', status: 'True' }), {
      status: { conditions: [{ type: 'X', status: 'True' }] },
    });
  });
});
