// The reconcile plan (SPEC §3.1–3.3): nodes + listed routes + cluster CIDRs →
// deletes, creates and per-node pod-CIDR actions. Pure: no I/O, no clock.
import { type Cidr, type IPFamily, CidrParseError, parseCIDRCached } from './cidr.ts';
import { isResponsibleForRoute } from './responsibility.ts';
import type { Node, NodeAddress, Route } from './types.ts';

export type PodCIDRAction = 'keep' | 'add' | 'update' | 'blocked' | 'invalid';

export interface PodCIDRPlan {
  /** As written on the node (R23 creates with this text). */
  readonly podCIDR: string;
  readonly canonical: string | undefined;
  readonly family: IPFamily | undefined;
  action: PodCIDRAction;
  /** invalid: the parse error; blocked: the owner's name. */
  readonly detail?: string;
  /** R13 false: created anyway, but never deleted by us (E3). */
  readonly outsideClusterCIDRs: boolean;
}

export interface NodePlan {
  readonly name: string;
  readonly uid: string;
  readonly node: Node;
  readonly podCIDRs: PodCIDRPlan[];
  /** Pod CIDR texts dropped as canonical duplicates (R16). */
  readonly duplicates: string[];
}

export type DeleteReason = 'blackhole' | 'no_node' | 'stale' | 'update' | 'blocked';

export interface PlannedDelete {
  readonly route: Route;
  readonly canonical: string;
  readonly reason: DeleteReason;
}

export interface PlannedCreate {
  readonly node: NodePlan;
  readonly cidr: PodCIDRPlan;
  readonly nameHint: string;
  readonly route: Route;
}

export interface ReconcilePlan {
  readonly deletes: PlannedDelete[];
  readonly creates: PlannedCreate[];
  /** Tracked nodes (R15) present in the cache, in cache order. */
  readonly nodes: NodePlan[];
  /** Route names/destinations that could not be parsed (R14). */
  readonly unparsableRoutes: { route: Route; error: string }[];
}

function nodeName(n: Node): string {
  return n.metadata?.name ?? '';
}

function creationMillis(n: Node): number {
  const t = n.metadata?.creationTimestamp;
  if (t === undefined) return Number.POSITIVE_INFINITY;
  const ms = t instanceof Date ? t.getTime() : Date.parse(t);
  return Number.isNaN(ms) ? Number.POSITIVE_INFINITY : ms;
}

/** R19: same length and every (type, address) of the node occurs in the route's list. */
export function addressesEqual(node: readonly NodeAddress[], route: readonly NodeAddress[]): boolean {
  if (node.length !== route.length) return false;
  return node.every((a) => route.some((b) => a.type === b.type && a.address === b.address));
}

// Responsibility per destination text, per cluster-CIDR list: reconciles see
// the same destinations again and again (see parseCIDRCached).
const managedMemo = new WeakMap<readonly Cidr[], Map<string, boolean>>();

function isManaged(clusterCIDRs: readonly Cidr[], text: string, dest: Cidr): boolean {
  let m = managedMemo.get(clusterCIDRs);
  if (!m) managedMemo.set(clusterCIDRs, (m = new Map()));
  let v = m.get(text);
  if (v === undefined) {
    if (m.size > 200_000) m.clear();
    v = isResponsibleForRoute(clusterCIDRs, dest);
    m.set(text, v);
  }
  return v;
}

interface ParsedRoute {
  readonly route: Route;
  readonly dest: Cidr | undefined;
  readonly managed: boolean;
}

export function planReconcile(
  nodes: readonly Node[],
  routes: readonly Route[],
  clusterCIDRs: readonly Cidr[],
): ReconcilePlan {
  const unparsableRoutes: ReconcilePlan['unparsableRoutes'] = [];
  const parsed: ParsedRoute[] = routes.map((route) => {
    const dest = parseCIDRCached(route.destinationCIDR);
    if (dest instanceof CidrParseError) {
      unparsableRoutes.push({ route, error: dest.message });
      return { route, dest: undefined, managed: false };
    }
    return { route, dest, managed: isManaged(clusterCIDRs, route.destinationCIDR, dest) };
  });

  // R15: group by target node, list order kept.
  const byNode = new Map<string, ParsedRoute[]>();
  for (const p of parsed) {
    if (p.route.targetNode === '') continue;
    let g = byNode.get(p.route.targetNode);
    if (!g) byNode.set(p.route.targetNode, (g = []));
    g.push(p);
  }

  // R16/R17: per node, de-duplicated pod CIDRs; malformed ones are kept as invalid.
  const nodePlans: NodePlan[] = [];
  const planByName = new Map<string, NodePlan>();
  // Most CIDRs have one claimant: keep the node itself, an array only when contested.
  const claims = new Map<string, NodePlan | NodePlan[]>();
  for (const node of nodes) {
    const name = nodeName(node);
    const podCIDRs = node.spec?.podCIDRs ?? [];
    if (podCIDRs.length === 0 && !byNode.has(name)) continue;
    const plan: NodePlan = { name, uid: node.metadata?.uid ?? '', node, podCIDRs: [], duplicates: [] };
    const seen = new Set<string>();
    for (const text of podCIDRs) {
      const c = parseCIDRCached(text);
      const key = c instanceof CidrParseError ? `invalid:${text}` : c.canonical;
      if (seen.has(key)) {
        plan.duplicates.push(text);
        continue;
      }
      seen.add(key);
      if (c instanceof CidrParseError) {
        plan.podCIDRs.push({
          podCIDR: text,
          canonical: undefined,
          family: undefined,
          action: 'invalid',
          detail: c.message,
          outsideClusterCIDRs: false,
        });
        continue;
      }
      plan.podCIDRs.push({
        podCIDR: text,
        canonical: c.canonical,
        family: c.family,
        action: 'add',
        outsideClusterCIDRs: !isManaged(clusterCIDRs, text, c),
      });
      const cl = claims.get(c.canonical);
      if (cl === undefined) claims.set(c.canonical, plan);
      else if (Array.isArray(cl)) cl.push(plan);
      else claims.set(c.canonical, [cl, plan]);
    }
    nodePlans.push(plan);
    planByName.set(name, plan);
  }

  // R21: one owner per contested CIDR.
  for (const [canonical, claimants] of claims) {
    if (!Array.isArray(claimants)) continue;
    const targeted = claimants.filter((np) =>
      (byNode.get(np.name) ?? []).some((p) => !p.route.blackhole && p.dest?.canonical === canonical),
    );
    const pool = targeted.length > 0 ? targeted : claimants;
    const owner = pool.reduce((a, b) => {
      const ta = creationMillis(a.node);
      const tb = creationMillis(b.node);
      return tb < ta || (tb === ta && b.name < a.name) ? b : a;
    });
    for (const np of claimants) {
      if (np === owner) continue;
      const pc = np.podCIDRs.find((x) => x.canonical === canonical)!;
      Object.assign(pc, { action: 'blocked', detail: owner.name });
    }
  }

  // R18: keep / add / update against the node's first matching non-blackhole route.
  for (const np of nodePlans) {
    const group = byNode.get(np.name) ?? [];
    const addrs = np.node.status?.addresses ?? [];
    for (const pc of np.podCIDRs) {
      if (pc.action !== 'add') continue;
      let match: ParsedRoute | undefined;
      for (const p of group) {
        if (!(p.managed && p.route.blackhole) && p.dest?.canonical === pc.canonical) {
          match = p;
          break;
        }
      }
      if (!match) continue;
      pc.action =
        !match.route.enableNodeAddresses || addressesEqual(addrs, match.route.targetNodeAddresses)
          ? 'keep'
          : 'update';
    }
  }

  // R22: delete managed routes that are blackholes or not wanted as they are.
  const deletes: PlannedDelete[] = [];
  for (const p of parsed) {
    if (!p.managed || !p.dest) continue;
    const canonical = p.dest.canonical;
    const np = p.route.targetNode === '' ? undefined : planByName.get(p.route.targetNode);
    let action: PodCIDRAction | undefined;
    if (np) for (const pc of np.podCIDRs) if (pc.canonical === canonical) action = pc.action;
    let reason: DeleteReason | undefined;
    if (p.route.blackhole) reason = 'blackhole';
    else if (action === undefined) reason = np ? 'stale' : 'no_node';
    else if (action === 'update' || action === 'blocked') reason = action;
    if (reason) deletes.push({ route: p.route, canonical, reason });
  }

  // R23: creates for add/update.
  const creates: PlannedCreate[] = [];
  for (const np of nodePlans) {
    for (const pc of np.podCIDRs) {
      if (pc.action !== 'add' && pc.action !== 'update') continue;
      creates.push({
        node: np,
        cidr: pc,
        nameHint: np.uid,
        route: {
          name: '',
          targetNode: np.name,
          targetNodeAddresses: np.node.status?.addresses ?? [],
          enableNodeAddresses: false,
          destinationCIDR: pc.podCIDR,
          blackhole: false,
        },
      });
    }
  }

  return { deletes, creates, nodes: nodePlans, unparsableRoutes };
}
