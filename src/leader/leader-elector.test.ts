// R61/R62 in virtual time against a fake Lease API with resourceVersion
// semantics (409 on a stale update or an existing create).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { VirtualClock } from '../core/clock.ts';
import { ApiStatusError, MemoryLogger } from '../core/ports.ts';
import { LeaderElector } from './leader-elector.ts';
import { KubeLeaseLock, type LeaseTransport } from './lease-lock.ts';

interface StoredLease {
  metadata: { name: string; namespace: string; resourceVersion: string };
  spec: Record<string, unknown>;
}

class FakeLeaseApi {
  lease: StoredLease | undefined;
  rv = 100;
  /** 'ok' | 'fail' (HTTP 500) | 'hang' (until the caller aborts). */
  mode: 'ok' | 'fail' | 'hang' = 'ok';
  /** Clients whose requests fail (a partitioned replica). */
  readonly partitioned = new Set<string>();
  readonly writes: { at: number; holder: unknown; method: string }[] = [];
  private readonly clock: VirtualClock;

  constructor(clock: VirtualClock) {
    this.clock = clock;
  }

  transport(client: string): LeaseTransport {
    return async (path, { method, body, signal }) => {
      if (this.mode === 'fail' || this.partitioned.has(client))
        throw new ApiStatusError(500, 'etcdserver: request timed out');
      if (this.mode === 'hang') {
        return new Promise((_resolve, reject) => {
          const abort = (): void => {
            const e = new Error('aborted');
            e.name = 'AbortError';
            reject(e);
          };
          if (signal.aborted) abort();
          else signal.addEventListener('abort', abort, { once: true });
        });
      }
      const copy = (): unknown => structuredClone(this.lease);
      if (method === 'GET') {
        if (!this.lease) throw new ApiStatusError(404, 'leases.coordination.k8s.io "x" not found');
        return copy();
      }
      const b = body as StoredLease;
      if (method === 'POST') {
        assert.match(path, /\/namespaces\/kube-system\/leases$/);
        if (this.lease) throw new ApiStatusError(409, 'already exists');
      } else {
        assert.equal(method, 'PUT');
        assert.match(path, /\/namespaces\/kube-system\/leases\/cloud-route-controller$/);
        if (!this.lease) throw new ApiStatusError(404, 'not found');
        if (b.metadata.resourceVersion !== this.lease.metadata.resourceVersion) {
          throw new ApiStatusError(
            409,
            'the object has been modified; please apply your changes to the latest version and try again',
          );
        }
      }
      this.lease = { metadata: { ...b.metadata, resourceVersion: String(++this.rv) }, spec: { ...b.spec } };
      this.writes.push({ at: this.clock.now(), holder: b.spec['holderIdentity'], method });
      return copy();
    };
  }

  holder(): unknown {
    return this.lease?.spec['holderIdentity'];
  }
}

const LEASE = 15_000;
const RENEW = 10_000;
const RETRY = 2_000;

function elector(api: FakeLeaseApi, clock: VirtualClock, id: string, status: boolean[] = []) {
  const logger = new MemoryLogger();
  const lock = new KubeLeaseLock({
    namespace: 'kube-system',
    name: 'cloud-route-controller',
    identity: id,
    transport: api.transport(id),
  });
  const le = new LeaderElector({
    lock,
    leaseDurationMs: LEASE,
    renewDeadlineMs: RENEW,
    retryPeriodMs: RETRY,
    clock,
    random: () => 0.5,
    logger,
    onLeaderStatus: (s) => status.push(s),
  });
  return { le, logger };
}

/** Runs `p` while advancing virtual time in small steps; returns its value and the time it settled. */
async function settle<T>(
  clock: VirtualClock,
  p: Promise<T>,
  limitMs = 120_000,
): Promise<{ value: T; at: number }> {
  let done: { value: T; at: number } | undefined;
  void p.then((value) => (done = { value, at: clock.now() }));
  const end = clock.now() + limitMs;
  while (done === undefined && clock.now() < end) await clock.advance(100);
  assert.ok(done, 'did not settle in time');
  return done;
}

describe('LeaderElector', () => {
  test('creates the Lease when none exists; client-go record fields', async () => {
    const clock = new VirtualClock();
    const api = new FakeLeaseApi(clock);
    const status: boolean[] = [];
    const { le } = elector(api, clock, 'host-a_1', status);
    const r = await settle(clock, le.acquire(new AbortController().signal));
    assert.equal(r.value, true);
    assert.equal(le.isLeader(), true);
    assert.deepEqual(status, [true]);
    const spec = api.lease!.spec;
    assert.equal(spec['holderIdentity'], 'host-a_1');
    assert.equal(spec['leaseDurationSeconds'], 15);
    assert.equal(spec['leaseTransitions'], 0);
    assert.match(String(spec['renewTime']), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  test('renews every retry period, keeps acquireTime; a standby waits', async () => {
    const clock = new VirtualClock();
    const api = new FakeLeaseApi(clock);
    const a = elector(api, clock, 'a');
    const b = elector(api, clock, 'b');
    await settle(clock, a.le.acquire(new AbortController().signal));
    const acquireTime = api.lease!.spec['acquireTime'];
    const stopA = new AbortController();
    const renewing = a.le.renew(stopA.signal);
    const stopB = new AbortController();
    let bWon = false;
    void b.le.acquire(stopB.signal).then((v) => (bWon = v));
    await clock.advance(60_000);
    assert.equal(bWon, false);
    assert.equal(api.holder(), 'a');
    assert.equal(api.lease!.spec['acquireTime'], acquireTime);
    const renewals = api.writes.filter((w) => w.holder === 'a').map((w) => w.at);
    for (let i = 1; i < renewals.length; i++) assert.ok(renewals[i]! - renewals[i - 1]! <= RETRY + 1);
    assert.ok(renewals.length >= 25);
    stopA.abort();
    stopB.abort();
    assert.equal(await renewing, 'stopped');
  });

  test('takes over only a lease unchanged for a lease duration on the local clock', async () => {
    const clock = new VirtualClock();
    const api = new FakeLeaseApi(clock);
    // A holder whose renewTime claims the far past: irrelevant, only local observation counts.
    api.lease = {
      metadata: { name: 'cloud-route-controller', namespace: 'kube-system', resourceVersion: '7' },
      spec: {
        holderIdentity: 'crashed',
        leaseDurationSeconds: 15,
        acquireTime: '2000-01-01T00:00:00.000000Z',
        renewTime: '2000-01-01T00:00:00.000000Z',
        leaseTransitions: 3,
      },
    };
    const status: boolean[] = [];
    const b = elector(api, clock, 'b', status);
    const start = clock.now();
    const r = await settle(clock, b.le.acquire(new AbortController().signal));
    assert.equal(r.value, true);
    assert.ok(r.at - start >= LEASE, `took over after ${r.at - start} ms`);
    assert.ok(r.at - start <= LEASE + RETRY * 2.2 + 200);
    assert.equal(api.holder(), 'b');
    assert.equal(api.lease!.spec['leaseTransitions'], 4);
    assert.ok(b.logger.messages().includes('new leader elected: crashed'));
  });

  test('a released lease is taken at the next attempt', async () => {
    const clock = new VirtualClock();
    const api = new FakeLeaseApi(clock);
    const a = elector(api, clock, 'a');
    const b = elector(api, clock, 'b');
    await settle(clock, a.le.acquire(new AbortController().signal));
    let bAt: number | undefined;
    void b.le.acquire(new AbortController().signal).then(() => (bAt = clock.now()));
    await clock.advance(5_000);
    assert.equal(bAt, undefined);
    const releasedAt = clock.now();
    assert.equal(await a.le.release(new AbortController().signal), true);
    assert.equal(api.holder(), '');
    assert.equal(api.lease!.spec['leaseDurationSeconds'], 1);
    assert.equal(a.le.isLeader(), false);
    await clock.advance(RETRY * 2.2 + 100);
    assert.ok(bAt !== undefined && bAt - releasedAt <= RETRY * 2.2 + 100);
    assert.equal(api.holder(), 'b');
  });

  test('release is a no-op for a standby', async () => {
    const clock = new VirtualClock();
    const api = new FakeLeaseApi(clock);
    const b = elector(api, clock, 'b');
    assert.equal(await b.le.release(new AbortController().signal), true);
    assert.equal(api.writes.length, 0);
  });

  test('R62: renewal failing for the renew deadline is lost before a standby may take over', async () => {
    const clock = new VirtualClock();
    const api = new FakeLeaseApi(clock);
    const status: boolean[] = [];
    const a = elector(api, clock, 'a', status);
    const b = elector(api, clock, 'b');
    await settle(clock, a.le.acquire(new AbortController().signal));
    const renewing = a.le.renew(new AbortController().signal);
    let bAt: number | undefined;
    void b.le.acquire(new AbortController().signal).then(() => (bAt = clock.now()));
    await clock.advance(10_000);
    const lastOk = api.writes.at(-1)!.at;
    api.partitioned.add('a');
    const lost = await settle(clock, renewing);
    assert.equal(lost.value, 'lost');
    assert.deepEqual(status, [true, false]);
    assert.ok(lost.at - lastOk <= RETRY + RENEW + 1, `lost ${lost.at - lastOk} ms after the last renewal`);
    await clock.advance(30_000);
    assert.ok(bAt !== undefined, 'standby took over');
    assert.ok(bAt - lastOk >= LEASE, `standby won ${bAt - lastOk} ms after the last renewal`);
    assert.ok(bAt > lost.at, 'the old leader gave up before the standby took over');
    assert.ok(
      a.logger
        .messages()
        .some((m) => m.startsWith('failed to renew lease kube-system/cloud-route-controller')),
    );
  });

  test('R62: a hanging renewal is aborted at the deadline', async () => {
    const clock = new VirtualClock();
    const api = new FakeLeaseApi(clock);
    const a = elector(api, clock, 'a');
    await settle(clock, a.le.acquire(new AbortController().signal));
    const renewing = a.le.renew(new AbortController().signal);
    await clock.advance(RETRY + 100);
    api.mode = 'hang';
    const startedHang = clock.now();
    const lost = await settle(clock, renewing);
    assert.equal(lost.value, 'lost');
    assert.ok(lost.at - startedHang <= RETRY + RENEW + 100);
  });

  test('a lost race (409) on takeover leaves exactly one leader', async () => {
    const clock = new VirtualClock();
    const api = new FakeLeaseApi(clock);
    api.lease = {
      metadata: { name: 'cloud-route-controller', namespace: 'kube-system', resourceVersion: '1' },
      spec: {
        holderIdentity: '',
        leaseDurationSeconds: 1,
        acquireTime: '',
        renewTime: '',
        leaseTransitions: 0,
      },
    };
    const a = elector(api, clock, 'a');
    const b = elector(api, clock, 'b');
    const won: string[] = [];
    void a.le.acquire(new AbortController().signal).then(() => won.push('a'));
    void b.le.acquire(new AbortController().signal).then(() => won.push('b'));
    await clock.advance(5_000);
    assert.equal(won.length, 1);
    assert.equal(api.holder(), won[0]);
    const loser = won[0] === 'a' ? b : a;
    assert.equal(loser.le.isLeader(), false);
    assert.ok(
      loser.logger
        .messages()
        .some((m) => m.startsWith('Failed to update lock: the object has been modified')),
    );
  });

  test('stop ends acquire and renew', async () => {
    const clock = new VirtualClock();
    const api = new FakeLeaseApi(clock);
    api.mode = 'fail';
    const a = elector(api, clock, 'a');
    const stop = new AbortController();
    const p = a.le.acquire(stop.signal);
    await clock.advance(7_000);
    stop.abort();
    assert.equal(await p, false);
    assert.equal(clock.pendingTimers(), 0);
  });
});
