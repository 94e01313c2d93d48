// Property-based safety of watch mode with the route cache (SPEC R65–R67), the
// known outcomes that keep it (R85) and the adaptive pacer (R68–R70), over
// random sequences of node events, out-of-band cloud changes and cloud faults
// (retryable, throttled with and without a retry time, permanent; fast-check,
// seeded):
//  (a) no delete ever removes a route outside the cluster CIDRs, an unmanaged
//      route, or a live node's route for a pod CIDR it alone claims (as the
//      reconcile that planned the delete saw the nodes), whatever the cache held;
//  (b) once faults stop, watch mode on its own holds exactly the desired routes
//      within 1.1 P (R49: the safety resync re-arms after every listing
//      reconcile, even one that failed for good);
//  (c) then one listing reconcile changes nothing more: the cloud is a fixpoint.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { canonicalCIDR, parseCIDR, tryParseCIDR } from '../core/cidr.ts';
import { PermanentError, RetryableError, ThrottledError } from '../core/errors.ts';
import { isResponsibleForRoute } from '../core/responsibility.ts';
import type { CallOptions, Node, Route } from '../core/types.ts';
import { harness, ip, type Harness } from '../testing/harness.ts';

const CLUSTER = ['10.120.0.0/16'];
const clusterCidrs = CLUSTER.map((c) => parseCIDR(c));
const POOL = ['10.120.0.0/24', '10.120.1.0/24', '10.120.2.0/24', '10.120.3.0/24', '192.168.0.0/24'];
const DESTS = [...POOL, '10.120.9.0/24', '10.0.0.0/8'];
const NAMES = ['n0', 'n1', 'n2', 'n3'];

const stepArb = fc.oneof(
  fc.record({
    kind: fc.constant('join' as const),
    name: fc.constantFrom(...NAMES),
    cidr: fc.constantFrom(...POOL),
  }),
  fc.record({ kind: fc.constant('leave' as const), name: fc.constantFrom(...NAMES) }),
  fc.record({
    kind: fc.constant('recidr' as const),
    name: fc.constantFrom(...NAMES),
    cidr: fc.constantFrom(...POOL),
  }),
  fc.record({ kind: fc.constant('readdress' as const), name: fc.constantFrom(...NAMES) }),
  fc.record({ kind: fc.constant('oobDelete' as const), dest: fc.constantFrom(...DESTS) }),
  fc.record({
    kind: fc.constant('oobAdd' as const),
    dest: fc.constantFrom(...DESTS),
    target: fc.constantFrom(...NAMES, 'gone', ''),
  }),
  fc.record({
    kind: fc.constant('faults' as const),
    rate: fc.constantFrom(0, 0.5, 1),
    error: fc.constantFrom('retryable', 'throttled', 'throttled-after', 'permanent'),
    reads: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('wait' as const), ms: fc.constantFrom(0, 15, 40, 3000, 15_000) }),
);
const scenarioArb = fc.record({
  initial: fc.subarray(NAMES),
  steps: fc.array(stepArb, { minLength: 1, maxLength: 14 }),
  paced: fc.boolean(),
  /** Safety resync period (R49): the default, or short enough to fire during the faults. */
  resyncMs: fc.constantFrom(3_600_000, 20_000),
  seed: fc.integer({ min: 1, max: 1_000_000 }),
});

const FAULTS = {
  retryable: () => new RetryableError('503 (injected)'),
  throttled: () => new ThrottledError('RequestLimitExceeded (injected)'),
  'throttled-after': () => new ThrottledError('429 (injected)', { retryAfterMs: 2_000 }),
  permanent: () => new PermanentError('refused (injected)'),
} as const;

/** Uncontested claimant per canonical pod CIDR (R21 resolves the contested ones). */
function owners(nodes: readonly Node[]): Map<string, string> {
  const claims = new Map<string, Set<string>>();
  for (const n of nodes) {
    for (const p of n.spec?.podCIDRs ?? []) {
      const c = canonicalCIDR(p);
      if (c === undefined) continue;
      claims.set(c, (claims.get(c) ?? new Set()).add(n.metadata!.name!));
    }
  }
  const out = new Map<string, string>();
  for (const [c, who] of claims) if (who.size === 1) out.set(c, [...who][0]!);
  return out;
}

/** Every uncontested pod CIDR routes to its claimant; no managed route is left that no node claims. */
function assertDesired(h: Harness, when: string): void {
  const own = owners(h.cluster.list());
  const byDest = new Map(h.cloud.snapshot().map((r) => [canonicalCIDR(r.destinationCIDR), r]));
  for (const [c, node] of own) {
    assert.equal(byDest.get(c)?.targetNode, node, `${when}: ${c} routes to its only claimant ${node}`);
  }
  for (const [c, r] of byDest) {
    if (c === undefined || !isResponsibleForRoute(clusterCidrs, parseCIDR(c))) continue;
    const claimed = h.cluster
      .list()
      .some((n) => (n.spec?.podCIDRs ?? []).some((p) => canonicalCIDR(p) === c));
    assert.ok(claimed, `${when}: stale managed route ${c} -> ${r.targetNode} survived`);
  }
}

describe('route cache safety (property-based)', () => {
  it('never deletes what it must not; watch mode alone converges after the faults (R49, R85), to a fixpoint of listing reconciles', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (s) => {
        const h = harness({
          seed: s.seed,
          clusterCIDRs: CLUSTER,
          nodes: s.initial.map((name, i) => ({
            name,
            podCIDRs: [POOL[i]!],
            addresses: ip(`10.0.0.${i + 1}`),
          })),
          cloud: { latencyMs: 20, ...(s.paced ? { writeRateLimit: { ratePerSec: 5, burst: 4 } } : {}) },
          controller: {
            watchBasedReconciliation: true,
            cloudCallTimeoutMs: 5000,
            routeResyncPeriodMs: s.resyncMs,
            ...(s.paced ? { cloudWriteLimit: { qps: 5, burst: 4 } } : {}),
          },
        });
        // The nodes as the running reconcile planned with them.
        let view: readonly Node[] = [];
        const list = h.cluster.list.bind(h.cluster);
        h.cluster.list = () => (view = list());
        // R103: a focused reconcile reads single nodes instead; the view is the cluster as it read them.
        const get = h.cluster.get.bind(h.cluster);
        h.cluster.get = (name: string) => {
          view = list();
          return get(name);
        };
        const violations: string[] = [];
        const del = h.cloud.deleteRoute.bind(h.cloud);
        h.cloud.deleteRoute = async (cluster: string, route: Readonly<Route>, opts: CallOptions) => {
          const d = tryParseCIDR(route.destinationCIDR);
          if (!d || !isResponsibleForRoute(clusterCidrs, d))
            violations.push(`unmanaged ${route.destinationCIDR}`);
          const actual = h.cloud.snapshot().find((r) => canonicalCIDR(r.destinationCIDR) === d?.canonical);
          const owner = d ? owners(view).get(d.canonical) : undefined;
          if (actual && actual.name === route.name && !actual.blackhole && owner === actual.targetNode)
            violations.push(`deleted ${d!.canonical} -> ${owner}, which it alone claims`);
          return del(cluster, route, opts);
        };

        let addr = 100;
        h.start();
        await h.clock.advance(1);
        for (const st of s.steps) {
          const exists = (n: string): boolean => h.cluster.get(n) !== undefined;
          switch (st.kind) {
            case 'join':
              if (!exists(st.name))
                h.cluster.createNode({
                  name: st.name,
                  podCIDRs: [st.cidr],
                  addresses: ip(`10.0.1.${addr++}`),
                });
              break;
            case 'leave':
              if (exists(st.name)) h.cluster.deleteNode(st.name);
              break;
            case 'recidr':
              if (exists(st.name))
                h.cluster.updateNode(st.name, (n) => {
                  n.spec = { ...n.spec, podCIDRs: [st.cidr] };
                });
              break;
            case 'readdress':
              if (exists(st.name)) h.cluster.setAddresses(st.name, ip(`10.0.2.${addr++}`));
              break;
            case 'oobDelete':
              h.cloud.removeRoute(st.dest);
              break;
            case 'oobAdd':
              h.cloud.removeRoute(st.dest);
              h.cloud.putRoute({ destinationCIDR: st.dest, targetNode: st.target, name: `oob-${addr++}` });
              break;
            case 'faults':
              h.cloud.clearFaults();
              if (st.rate > 0)
                h.cloud.failFraction(
                  st.rate,
                  st.reads ? ['list', 'create', 'delete'] : ['create', 'delete'],
                  FAULTS[st.error],
                );
              break;
            case 'wait':
              await h.clock.advance(st.ms);
              break;
          }
        }
        h.cloud.clearFaults();
        // (b): no node event after the faults, yet a list comes within 1.1 P of the last one and repairs all.
        await h.clock.advance(1.1 * s.resyncMs + 60_000);
        assertDesired(h, 'watch mode alone');
        await h.stop();
        assert.deepEqual(violations, []);

        // (c): one listing reconcile after the faults, then a second one changes nothing.
        await h.reconcile('periodic');
        const after = h.cloud.snapshot().map((r) => `${r.name}:${r.destinationCIDR}->${r.targetNode}`);
        const calls = h.cloud.calls.length;
        const again = await h.reconcile('periodic');
        assert.equal(again.created + again.deleted, 0, 'a fixpoint of listing reconciles');
        assert.equal(h.cloud.calls.length, calls + 1, 'only the list');
        assert.deepEqual(
          h.cloud.snapshot().map((r) => `${r.name}:${r.destinationCIDR}->${r.targetNode}`),
          after,
        );
        assert.deepEqual(violations, []);
        assertDesired(h, 'after a listing reconcile');
      }),
      { numRuns: 150 },
    );
  });
});
