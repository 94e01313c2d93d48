import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { errorKind, retryAfterMs } from '../../core/errors.ts';
import { HcloudClient, HcloudRoutes } from './index.ts';
import { callOpts, NET, NODES, paths, rejectsWithKind, route, setup, until } from './testing/helpers.ts';

describe('HcloudRoutes: errors', () => {
  it('429 → ThrottledError with retryAfterMs, then fails fast without requests (R6)', async (t) => {
    const { fake, routes } = await setup(t);
    fake.setRateLimit(3600, 0);
    await assert.rejects(routes.listRoutes('c', callOpts()), (err: unknown) => {
      assert.equal(errorKind(err), 'throttled');
      const ms = retryAfterMs(err) ?? 0;
      assert.ok(ms >= 1000 && ms <= 2000, `retryAfterMs ${ms}`);
      assert.match((err as Error).message, /rate_limit_exceeded, HTTP 429/);
      return true;
    });
    const n = fake.requests.length;
    await rejectsWithKind(
      routes.createRoute('c', 'u', route('node-1', '10.244.1.0/24'), callOpts()),
      'throttled',
    );
    assert.equal(fake.requests.length, n);
  });

  it('RateLimit-Remaining: 0 on a success stops the next request before it is sent', async (t) => {
    const { fake, client } = await setup(t);
    fake.setRateLimit(360, 1); // refills one request per 10 s
    await client.getNetwork(NET, new AbortController().signal);
    const n = fake.requests.length;
    await assert.rejects(client.getNetwork(NET, new AbortController().signal), (err: unknown) => {
      assert.equal(errorKind(err), 'throttled');
      const ms = retryAfterMs(err) ?? 0;
      assert.ok(ms > 8000 && ms <= 10_000, `retryAfterMs ${ms}`);
      return true;
    });
    assert.equal(fake.requests.length, n);
  });

  it('locked and conflict → ConflictError', async (t) => {
    const { fake, client, routes } = await setup(t);
    fake.setLocked(NET, true);
    await rejectsWithKind(
      routes.createRoute('c', 'u', route('node-1', '10.244.1.0/24'), callOpts()),
      'conflict',
      /locked/,
    );
    fake.setLocked(NET, false);
    // Another process's action is running on the network.
    fake.holdActions = true;
    const other = new HcloudRoutes({ client, network: NET, nodes: NODES });
    const running = other.createRoute('c', 'u', route('node-2', '10.244.2.0/24'), callOpts());
    await until(() => fake.mutations().length === 1, 'first action');
    await rejectsWithKind(
      routes.createRoute('c', 'u', route('node-1', '10.244.1.0/24'), callOpts()),
      'conflict',
      /conflict/,
    );
    fake.releaseActions();
    await running;
  });

  it('100 routes per network → QuotaExceededError', async (t) => {
    const { fake, routes } = await setup(t);
    const full = Array.from({ length: 100 }, (_, i) => ({
      destination: `10.250.${i}.0/24`,
      gateway: '10.0.3.1',
    }));
    fake.addNetwork({ id: NET, name: 'k8s', ipRange: '10.0.0.0/16', routes: full });
    await rejectsWithKind(
      routes.createRoute('c', 'u', route('node-1', '10.244.1.0/24'), callOpts()),
      'quota_exceeded',
      /resource_limit_exceeded/,
    );
    assert.equal(fake.routes(NET).length, 100);
  });

  it('permanent errors: IPv6, bad CIDR, unknown server, no providerID, invalid_input', async (t) => {
    const { fake, routes } = await setup(t);
    await rejectsWithKind(
      routes.createRoute('c', 'u', route('node-1', 'fd00:1::/64'), callOpts()),
      'permanent',
      /IPv4/,
    );
    await rejectsWithKind(
      routes.createRoute('c', 'u', route('node-1', '10.244.1.0/33'), callOpts()),
      'permanent',
    );
    assert.equal(fake.requests.length, 0);
    await rejectsWithKind(
      routes.createRoute('c', 'u', route('node-5', '10.244.5.0/24'), callOpts()),
      'permanent',
      /999.*not found/,
    );
    await rejectsWithKind(
      routes.createRoute('c', 'u', route('node-x', '10.244.6.0/24'), callOpts()),
      'permanent',
      /providerID/,
    );
    await rejectsWithKind(
      routes.createRoute('c', 'u', route('robot-1', '10.244.6.0/24'), callOpts()),
      'permanent',
      /hrobot/,
    );
    await rejectsWithKind(
      routes.createRoute('c', 'u', route('gone', '10.244.6.0/24'), callOpts()),
      'permanent',
    );
    fake.failNext('POST', `/networks/${NET}/actions/add_route`, {
      status: 400,
      code: 'invalid_input',
      message: 'invalid input in field "destination"',
    });
    await rejectsWithKind(
      routes.createRoute('c', 'u', route('node-1', '10.244.1.0/24'), callOpts()),
      'permanent',
      /invalid_input/,
    );
  });

  it('server not attached to the network → RetryableError', async (t) => {
    const { routes } = await setup(t);
    await rejectsWithKind(
      routes.createRoute('c', 'u', route('node-4', '10.244.4.0/24'), callOpts()),
      'retryable',
      /not attached/,
    );
  });

  it('5xx, a failed action and network errors → RetryableError', async (t) => {
    const { fake, client, routes } = await setup(t);
    fake.failNext('GET', `/networks/${NET}`, { status: 503, code: 'service_error', message: 'try again' });
    await rejectsWithKind(
      routes.listRoutes('c', callOpts()),
      'retryable',
      /try again \(service_error, HTTP 503\)/,
    );
    fake.failNextAction({ code: 'service_error', message: 'backend hiccup' });
    await rejectsWithKind(
      routes.createRoute('c', 'u', route('node-1', '10.244.1.0/24'), callOpts()),
      'retryable',
      /backend hiccup/,
    );
    assert.deepEqual(fake.routes(NET), []);
    await fake.close();
    await rejectsWithKind(
      client.getNetwork(NET, new AbortController().signal),
      'retryable',
      /request failed/,
    );
  });

  it('abort during action polling → AbortError and no further mutation (R4)', async (t) => {
    const { fake, routes } = await setup(t);
    fake.addNetwork({
      id: NET,
      name: 'k8s',
      ipRange: '10.0.0.0/16',
      routes: [{ destination: '10.244.1.0/24', gateway: '10.0.2.1' }],
    });
    fake.holdActions = true;
    const ac = new AbortController();
    const p = routes.createRoute('c', 'u', route('node-1', '10.244.1.0/24'), callOpts(ac.signal));
    await until(() => paths(fake, 'GET').some((x) => x.startsWith('/v1/actions/')), 'polling');
    ac.abort();
    // The action is still held, so polling alone could never end this call:
    // rejecting now means the abort ended it (a wall-clock bound here failed
    // on a loaded machine).
    await rejectsWithKind(p, 'abort');
    fake.releaseActions();
    await new Promise((r) => setTimeout(r, 30));
    assert.deepEqual(
      fake.mutations().map((r) => r.path.split('/').pop()),
      ['delete_route'],
    );
  });

  it('abort before the call or while queued behind another mutation → AbortError, nothing sent', async (t) => {
    const { fake, routes } = await setup(t);
    const ac = new AbortController();
    ac.abort();
    await rejectsWithKind(routes.listRoutes('c', callOpts(ac.signal)), 'abort');
    await rejectsWithKind(
      routes.deleteRoute('c', route('node-1', '10.244.1.0/24'), callOpts(ac.signal)),
      'abort',
    );
    assert.equal(fake.requests.length, 0);

    fake.holdActions = true;
    const first = routes.createRoute('c', 'u', route('node-1', '10.244.1.0/24'), callOpts());
    await until(() => fake.mutations().length === 1, 'first mutation');
    const ac2 = new AbortController();
    const queued = routes.createRoute('c', 'u', route('node-2', '10.244.2.0/24'), callOpts(ac2.signal));
    await new Promise((r) => setTimeout(r, 10));
    ac2.abort();
    await rejectsWithKind(queued, 'abort');
    fake.releaseActions();
    await first;
    // The queue still works after an aborted waiter.
    fake.holdActions = false;
    await routes.createRoute('c', 'u', route('node-2', '10.244.3.0/24'), callOpts());
    assert.deepEqual(
      fake.routes(NET).map((r) => r.destination),
      ['10.244.1.0/24', '10.244.3.0/24'],
    );
  });

  it('never puts the token into error messages', async (t) => {
    const { fake } = await setup(t);
    const secret = 'wrong-secret-token-value';
    const bad = new HcloudClient({ endpoint: fake.endpoint, token: secret, pollIntervalMs: 5 });
    await assert.rejects(bad.getNetwork(NET, new AbortController().signal), (err: unknown) => {
      assert.equal(errorKind(err), 'permanent');
      assert.match((err as Error).message, /unauthorized, HTTP 401/);
      assert.ok(!(err as Error).message.includes(secret));
      return true;
    });
    // Even if the API echoed the Authorization header back, it is redacted.
    const client = new HcloudClient({ endpoint: fake.endpoint, token: fake.token, pollIntervalMs: 5 });
    fake.failNext('GET', '/networks', {
      status: 500,
      code: 'server_error',
      message: `bad header Bearer ${fake.token}`,
    });
    await assert.rejects(client.getNetwork(NET, new AbortController().signal), (err: unknown) => {
      assert.ok(!(err as Error).message.includes(fake.token), (err as Error).message);
      assert.match((err as Error).message, /\[redacted\]/);
      return true;
    });
  });
});
