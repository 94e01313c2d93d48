// R103–R105: a focused plan does what a full plan over the same state would do.
// Random node events, out-of-band condition changes and write failures against
// the route cache; after every step both plans are made and compared.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseCIDR } from './cidr.ts';
import { conditionSatisfied, conditionTarget, networkCondition, routesCreated } from './condition.ts';
import { planReconcile, type ReconcilePlan } from './plan.ts';
import { PlanFocus, type FocusMarks } from './plan-focus.ts';
import { RouteCache } from './route-cache.ts';
import type { Node, NodeLister, Route } from './types.ts';

const CLUSTER = [parseCIDR('10.120.0.0/16'), parseCIDR('fd00:120::/48')];
const NAMES = ['a', 'b', 'c', 'd', 'e'];
const POOL = [
  '10.120.0.0/24',
  '10.120.1.0/24',
  '10.120.2.0/24',
  'fd00:120:0:1::/64',
  '192.168.5.0/24',
  'bogus',
];
const ADDRS = ['10.0.0.1', '10.0.0.2', '10.0.0.3'];

const nodeArb = fc.record({
  name: fc.constantFrom(...NAMES),
  cidrs: fc.subarray(POOL, { maxLength: 2 }),
  addr: fc.constantFrom(...ADDRS),
  uid: fc.integer({ min: 1, max: 3 }),
});
const routeArb = fc.record({
  dest: fc.constantFrom(...POOL.filter((p) => p !== 'bogus'), '10.120.9.0/24'),
  target: fc.constantFrom(...NAMES, 'gone', ''),
  blackhole: fc.boolean(),
  addresses: fc.boolean(),
});
const stepArb = fc.oneof(
  fc.record({ kind: fc.constant('upsert' as const), node: nodeArb }),
  fc.record({ kind: fc.constant('delete' as const), name: fc.constantFrom(...NAMES) }),
  fc.record({ kind: fc.constant('drift' as const), name: fc.constantFrom(...NAMES) }),
  fc.record({
    kind: fc.constant('reconcile' as const),
    // One bit per write or patch: does it succeed?
    fate: fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
    listedAs: fc.boolean(),
  }),
);

function makeNode(n: { name: string; cidrs: string[]; addr: string; uid: number }, created: number): Node {
  return {
    metadata: { name: n.name, uid: `${n.name}-${n.uid}`, creationTimestamp: new Date(created) },
    spec: { podCIDRs: n.cidrs },
    status: { addresses: [{ type: 'InternalIP', address: n.addr }] },
  };
}

function makeRoute(
  r: { dest: string; target: string; blackhole: boolean; addresses: boolean },
  i: number,
): Route {
  return {
    name: `r${i}`,
    targetNode: r.target,
    targetNodeAddresses: [{ type: 'InternalIP', address: ADDRS[i % ADDRS.length]! }],
    enableNodeAddresses: r.addresses,
    destinationCIDR: r.dest,
    blackhole: r.blackhole,
  };
}

/** The writes and patches of a plan, comparable across plans. */
function effects(plan: ReconcilePlan): string[] {
  const out = [
    ...plan.deletes.map((d) => `delete ${d.route.name} ${d.canonical} (${d.reason})`),
    ...plan.creates.map((c) => `create ${c.node.name}/${c.node.uid} ${c.cidr.canonical} (${c.cidr.action})`),
  ];
  for (const np of plan.nodes) {
    const target = conditionTarget(routesCreated(np));
    if (!conditionSatisfied(np.node, target)) out.push(`patch ${np.name} ${target.status}`);
  }
  return out.sort();
}

describe('incremental planning (SPEC R103–R105, property-based)', () => {
  it('a focused plan writes and patches exactly what a full plan over the same state would', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(nodeArb, { selector: (n) => n.name, maxLength: 5 }),
        fc.array(routeArb, { maxLength: 8 }),
        fc.array(stepArb, { minLength: 1, maxLength: 25 }),
        fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
        (initialNodes, initialRoutes, steps, firstFate) => {
          let clock = 1;
          const nodes = new Map<string, Node>();
          for (const n of initialNodes) nodes.set(n.name, makeNode(n, clock++));
          const lister: NodeLister = { get: (name) => nodes.get(name), list: () => [...nodes.values()] };
          const cache = new RouteCache(Number.MAX_SAFE_INTEGER);
          const focus = new PlanFocus();
          focus.track(true);
          cache.fill(initialRoutes.map(makeRoute), 0, lister.list());
          focus.reset(lister.list());
          let created = 100;
          const carryOut = (full: ReconcilePlan, fate: readonly boolean[], listedAs: boolean): void => {
            // Carry the full plan out; failed writes and patches are what the reconcile left unsettled.
            const unsettled: { names: Set<string>; destinations: Set<string> } = {
              names: new Set(),
              destinations: new Set(),
            };
            let k = 0;
            const ok = (): boolean => fate[k++ % fate.length]!;
            for (const d of full.deletes) {
              if (ok()) cache.deleted(d.route);
              else {
                if (d.route.targetNode !== '') unsettled.names.add(d.route.targetNode);
                unsettled.destinations.add(d.canonical);
              }
            }
            for (const c of full.creates) {
              // As the reconcile does (R105): an update outside the cluster CIDRs stays marked.
              if (c.cidr.action === 'update' && c.cidr.outsideClusterCIDRs) unsettled.names.add(c.node.name);
              if (ok()) {
                const listed = listedAs ? { ...c.route, name: `r${created++}` } : undefined;
                cache.created(c.route, listed, c.node.node);
                c.cidr.action = 'keep';
              } else {
                unsettled.names.add(c.node.name);
                unsettled.destinations.add(c.cidr.canonical!);
              }
            }
            for (const np of full.nodes) {
              const target = conditionTarget(routesCreated(np));
              if (conditionSatisfied(np.node, target)) continue;
              if (!ok()) {
                unsettled.names.add(np.name);
                continue;
              }
              const n = structuredClone(nodes.get(np.name)!);
              n.status!.conditions = [networkCondition(target, new Date(0))];
              nodes.set(np.name, n); // our own echo: no trigger (R52)
            }
            focus.restore(unsettled satisfies FocusMarks);
          };
          // The listing reconcile of a run's start plans everything.
          carryOut(
            planReconcile(
              lister.list(),
              cache.snapshot(0)!.map((e) => e.route),
              CLUSTER,
            ),
            firstFate,
            true,
          );

          for (const st of steps) {
            if (st.kind === 'upsert') {
              const old = nodes.get(st.node.name);
              const n = makeNode(st.node, old?.metadata?.creationTimestamp === undefined ? clock++ : clock);
              if (old !== undefined && old.metadata!.uid === n.metadata!.uid)
                n.metadata!.creationTimestamp = old.metadata!.creationTimestamp;
              n.status!.conditions = old?.status?.conditions ?? [];
              nodes.set(n.metadata!.name!, n);
              focus.nodeChanged(old, n);
            } else if (st.kind === 'delete') {
              const old = nodes.get(st.name);
              if (old === undefined) continue;
              nodes.delete(st.name);
              focus.nodeChanged(old, undefined);
            } else if (st.kind === 'drift') {
              const old = nodes.get(st.name);
              if (old === undefined) continue;
              const n = structuredClone(old);
              n.status!.conditions = [];
              nodes.set(st.name, n);
              focus.nodeChanged(old, n); // R52 drift: a trigger the filter reports
            } else {
              const full = planReconcile(
                lister.list(),
                (cache.snapshot(0) ?? []).map((e) => e.route),
                CLUSTER,
              );
              const marks = focus.take();
              const view = focus.view(marks, lister, cache);
              const focused = planReconcile(
                view.nodes,
                view.routes.map((e) => e.route),
                CLUSTER,
              );
              assert.deepEqual(effects(focused), effects(full));

              carryOut(full, st.fate, st.listedAs);
            }
          }
        },
      ),
      {
        numRuns: Number(process.env['FC_RUNS'] ?? 300),
        ...(process.env['FC_SEED'] ? { seed: Number(process.env['FC_SEED']) } : {}),
      },
    );
  });
});
