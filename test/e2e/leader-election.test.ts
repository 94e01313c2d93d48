// LeaderElector + KubeLeaseLock against a real kube-apiserver, as the user of
// deploy/base/rbac.yaml: Lease creation, renewals, a real 409 on a stale
// resourceVersion, release and takeover, and the Role's resourceNames limit.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { RealClock } from '../../src/core/clock.ts';
import { MemoryLogger, statusCodeOf } from '../../src/core/ports.ts';
import { createKubeClient, type KubeClient } from '../../src/kube/index.ts';
import { LeaderElector } from '../../src/leader/leader-elector.ts';
import { KubeLeaseLock, type LeaseTransport } from '../../src/leader/lease-lock.ts';
import { apiRequest, requireTestenv, startControlPlane, testenvBinaries } from '../support/controlplane.ts';
import type { ControlPlane } from '../support/controlplane.ts';
import { setupControllerUser, waitFor } from '../integration/kube-helpers.ts';

const enabled = testenvBinaries() !== undefined;
const LEASE_PATH = '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/cloud-route-controller';

describe('leader election on a real apiserver', { timeout: 120_000 }, () => {
  let cp: ControlPlane | undefined;
  let client: KubeClient | undefined;

  before(async () => {
    if (!enabled) return;
    cp = await startControlPlane();
    client = createKubeClient({ kubeconfig: await setupControllerUser(cp) });
  });

  after(async () => {
    client?.close();
    await cp?.stop();
  });

  const transport = (): LeaseTransport => (p, o) =>
    client!.requestJson(p, { method: o.method, body: o.body, signal: o.signal, rateLimited: false });

  function elector(id: string, name = 'cloud-route-controller') {
    const lock = new KubeLeaseLock({ namespace: 'kube-system', name, identity: id, transport: transport() });
    const logger = new MemoryLogger();
    const le = new LeaderElector({
      lock,
      leaseDurationMs: 3_000,
      renewDeadlineMs: 2_000,
      retryPeriodMs: 300,
      clock: new RealClock(),
      logger,
    });
    return { lock, le, logger };
  }

  async function leaseSpec(): Promise<Record<string, unknown>> {
    const r = await apiRequest(cp!.adminKubeconfig, 'GET', LEASE_PATH);
    assert.equal(r.status, 200, r.body);
    return (JSON.parse(r.body) as { spec: Record<string, unknown> }).spec;
  }

  test('acquire, renew, real 409, release and takeover', async (t) => {
    if (!enabled || !cp) {
      requireTestenv(t);
      return;
    }
    const a = elector('host_a');
    const b = elector('host_b');
    const stopAll = new AbortController();
    assert.equal(await a.le.acquire(stopAll.signal), true);
    let spec = await leaseSpec();
    assert.equal(spec['holderIdentity'], 'host_a');
    assert.equal(spec['leaseDurationSeconds'], 3);
    assert.match(String(spec['renewTime']), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);

    const stopRenew = new AbortController();
    const renewing = a.le.renew(stopRenew.signal);
    let bWon = false;
    const bAcquire = b.le.acquire(stopAll.signal).then((v) => (bWon = v));
    const firstRenew = String(spec['renewTime']);
    await new Promise((r) => setTimeout(r, 4_000)); // longer than the lease duration
    assert.equal(bWon, false, 'the standby never takes a renewed lease');
    spec = await leaseSpec();
    assert.equal(spec['holderIdentity'], 'host_a');
    assert.notEqual(spec['renewTime'], firstRenew);

    // Optimistic concurrency: a write at a stale resourceVersion is a real 409.
    const stale = new KubeLeaseLock({
      namespace: 'kube-system',
      name: 'cloud-route-controller',
      identity: 'x',
      transport: transport(),
    });
    const seen = await stale.get(stopAll.signal);
    await waitFor(
      'a renewal after the read',
      5_000,
      async () => String((await leaseSpec())['renewTime']) !== seen.record.renewTime,
    );
    await assert.rejects(
      stale.update({ ...seen.record, holderIdentity: 'x' }, stopAll.signal),
      (err) => statusCodeOf(err) === 409,
    );

    stopRenew.abort();
    assert.equal(await renewing, 'stopped');
    const releasedAt = Date.now();
    assert.equal(await a.le.release(AbortSignal.timeout(5_000)), true);
    await bAcquire;
    assert.equal(bWon, true);
    const handover = Date.now() - releasedAt;
    t.diagnostic(`release → takeover in ${handover} ms`);
    assert.ok(handover < 1_500, `takeover ${handover} ms after the release`);
    spec = await leaseSpec();
    assert.equal(spec['holderIdentity'], 'host_b');
    assert.equal(spec['leaseTransitions'], 1);
    stopAll.abort();
  });

  test('the Role of deploy/base/rbac.yaml grants only the named Lease', async (t) => {
    if (!enabled || !cp) {
      requireTestenv(t);
      return;
    }
    const other = elector('host_c', 'someone-elses-lease');
    // create is not restricted by name (RBAC cannot), get/update are.
    await assert.rejects(other.lock.get(AbortSignal.timeout(5_000)), (err) => statusCodeOf(err) === 403);
  });
});
