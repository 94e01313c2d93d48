// Property-based safety invariants (fast-check) over random clusters, random
// cloud states and random faults:
//  1. no route outside the cluster CIDRs is ever deleted;
//  2. no route matching an existing node's uncontested pod CIDR and target is ever deleted;
//  3. once the cloud stops failing, one reconcile converges to exactly the desired routes.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { canonicalCIDR, parseCIDR, tryParseCIDR } from '../core/cidr.ts';
import { isResponsibleForRoute } from '../core/responsibility.ts';
import { harness } from '../testing/harness.ts';

const CLUSTER = ['10.120.0.0/16', 'a00::/8'];
const clusterCidrs = CLUSTER.map((c) => parseCIDR(c));
const POOL = [
  '10.120.0.0/24',
  '10.120.1.0/24',
  '10.120.2.0/24',
  '10.120.3.0/24',
  '10.120.3.7/24', // same canonical as .3.0 (host bits)
  'a00:100::/24',
  'a00:200::/24',
  '192.168.0.0/24', // outside the cluster CIDRs
  '10.120.9.0/33', // malformed
];
const DESTS = [...POOL.slice(0, 8), '10.121.0.0/24', '10.0.0.0/8', 'b00::/24', 'not-a-cidr'];

const nodeArb = fc.record({
  podCIDRs: fc.subarray(POOL, { maxLength: 3 }),
  age: fc.integer({ min: 0, max: 5 }),
});
const routeArb = fc.record({
  dest: fc.constantFrom(...DESTS),
  target: fc.constantFrom('n0', 'n1', 'n2', 'n3', 'gone', ''),
  blackhole: fc.boolean(),
});
const scenarioArb = fc.record({
  nodes: fc.array(nodeArb, { minLength: 0, maxLength: 4 }),
  routes: fc.array(routeArb, { maxLength: 8 }),
  faultRate: fc.constantFrom(0, 0.3, 0.7, 1),
  rounds: fc.integer({ min: 1, max: 3 }),
  seed: fc.integer({ min: 1, max: 1_000_000 }),
});

describe('safety invariants (property-based)', () => {
  it('never deletes what it must not; converges once the cloud recovers', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (s) => {
        const nodes = s.nodes.map((n, i) => ({
          name: `n${i}`,
          uid: `u${i}`,
          podCIDRs: n.podCIDRs,
          creationTimestamp: new Date(Date.UTC(2026, 0, 1 + n.age, 0, 0, i)),
        }));
        const seen = new Set<string>();
        const routes = s.routes
          .filter((r) => {
            const k = canonicalCIDR(r.dest) ?? r.dest;
            if (seen.has(k)) return false; // a route table holds one route per destination
            seen.add(k);
            return true;
          })
          .map((r, i) => ({
            name: `r${i}`,
            destinationCIDR: r.dest,
            targetNode: r.target,
            blackhole: r.blackhole,
          }));
        const h = harness({ clusterCIDRs: CLUSTER, nodes, routes, seed: s.seed });
        const initial = h.cloud.snapshot();

        // Claims per canonical CIDR: contested ones are resolved by R21, others are protected.
        const claims = new Map<string, string[]>();
        for (const n of nodes) {
          for (const c of new Set(n.podCIDRs.map((p) => canonicalCIDR(p)).filter((x) => x !== undefined))) {
            claims.set(c, [...(claims.get(c) ?? []), n.name]);
          }
        }

        h.cloud.failFraction(s.faultRate, ['create', 'delete']);
        for (let i = 0; i < s.rounds; i++) await h.reconcile();
        h.cloud.clearFaults();
        await h.reconcile();

        for (const call of h.cloud.calls.filter((c) => c.op === 'delete')) {
          const dest = parseCIDR(call.destinationCIDR!);
          assert.ok(
            isResponsibleForRoute(clusterCidrs, dest),
            `deleted ${call.destinationCIDR} outside the cluster CIDRs`,
          );
          const claimants = claims.get(dest.canonical) ?? [];
          const wasBlackhole = initial.some(
            (r) =>
              r.blackhole &&
              canonicalCIDR(r.destinationCIDR) === dest.canonical &&
              r.targetNode === call.targetNode,
          );
          if (claimants.length === 1 && !wasBlackhole) {
            assert.notEqual(
              call.targetNode,
              claimants[0],
              `deleted the route of node ${call.targetNode} for ${dest.canonical}`,
            );
          }
        }

        // Convergence: exact desired set.
        const final = h.cloud.snapshot();
        const byDest = new Map(final.map((r) => [canonicalCIDR(r.destinationCIDR) ?? r.destinationCIDR, r]));
        for (const [c, who] of claims) {
          const r = byDest.get(c);
          assert.ok(r, `no route for ${c}`);
          assert.ok(who.includes(r.targetNode), `${c} targets ${r.targetNode}, not a claimant`);
          // An unmanaged blackhole is never ours to delete; R18 only skips managed ones.
          if (isResponsibleForRoute(clusterCidrs, parseCIDR(c))) assert.equal(r.blackhole, false);
        }
        for (const r of final) {
          const d = tryParseCIDR(r.destinationCIDR);
          if (!d || !isResponsibleForRoute(clusterCidrs, d)) continue;
          assert.ok(claims.has(d.canonical), `stale managed route ${d.canonical} survived`);
        }
        // Unmanaged routes are untouched.
        for (const r of initial) {
          const c = canonicalCIDR(r.destinationCIDR);
          if (c !== undefined && isResponsibleForRoute(clusterCidrs, parseCIDR(c))) continue;
          if (c !== undefined && claims.has(c)) continue;
          assert.ok(
            final.some((f) => f.name === r.name),
            `unmanaged route ${r.destinationCIDR} was touched`,
          );
        }
        // Every node with valid pod CIDRs has the right condition.
        for (const n of nodes) {
          const valid = n.podCIDRs.map((p) => canonicalCIDR(p));
          const cond = h.conditions()[n.name];
          if (n.podCIDRs.length === 0) continue;
          const ok = valid.every((c) => c !== undefined && byDest.get(c)?.targetNode === n.name);
          assert.equal(cond, ok ? 'False/RouteCreated' : 'True/NoRouteCreated', `${n.name}`);
        }
      }),
      { numRuns: 300 },
    );
  });
});
