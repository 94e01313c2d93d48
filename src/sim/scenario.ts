// What happens to the cluster and the cloud during a simulation. The timeline
// is generated once from the seed and replayed identically in both modes, so
// every difference in the results comes from the controller alone.
import { pick, seededRandom } from './random.ts';

export const SCENARIO_NAMES = ['default', 'idle'] as const;
export type ScenarioName = (typeof SCENARIO_NAMES)[number];

export interface Scenario {
  readonly name: string;
  /** Nodes present at start, each with its route already in the cloud. */
  readonly nodes: number;
  readonly durationMs: number;
  /** Kubelet heartbeat per node (0 disables). */
  readonly heartbeatIntervalMs: number;
  /** Nodes joining, and as many leaving, per 10 simulated minutes. */
  readonly churn: number;
  /** Nodes joining in one scale-up burst at 1/12 of the run, removed again at 3/4. */
  readonly burst: number;
  /** One node's InternalIP changes at 1/3 of the run. */
  readonly addressChange: boolean;
  /** One route is deleted in the cloud by someone else at 5/12 of the run. */
  readonly outOfBandDelete: boolean;
  /** The cloud throttles every call from 1/2 to 11/20 of the run (minutes 30–33 of an hour). */
  readonly throttleWindow: boolean;
  /** Nodes joining while the cloud throttles. */
  readonly throttleJoins: number;
  readonly cloudLatencyMs: number;
  /** Cloud-side limit on route writes (create/delete) per second; 0 = none. Burst is twice the rate. */
  readonly cloudWriteRatePerSec: number;
  readonly seed: number;
}

const MINUTE = 60_000;

export const PRESETS: Readonly<Record<ScenarioName, Scenario>> = {
  default: {
    name: 'default',
    nodes: 500,
    durationMs: 60 * MINUTE,
    heartbeatIntervalMs: 10_000,
    churn: 1,
    burst: 50,
    addressChange: true,
    outOfBandDelete: true,
    throttleWindow: true,
    throttleJoins: 2,
    cloudLatencyMs: 50,
    cloudWriteRatePerSec: 10,
    seed: 1,
  },
  idle: {
    name: 'idle',
    nodes: 500,
    durationMs: 60 * MINUTE,
    heartbeatIntervalMs: 10_000,
    churn: 0,
    burst: 0,
    addressChange: false,
    outOfBandDelete: false,
    throttleWindow: false,
    throttleJoins: 0,
    cloudLatencyMs: 50,
    cloudWriteRatePerSec: 10,
    seed: 1,
  },
};

export const CLUSTER_NAME = 'sim';
export const CLUSTER_CIDR = '10.0.0.0/8';
/** /24 pod CIDRs inside 10.0.0.0/8, one per node index. */
export const MAX_NODE_INDEX = 65_536;

export type SimEvent =
  | { readonly at: number; readonly kind: 'join'; readonly index: number; readonly cause: JoinCause }
  | { readonly at: number; readonly kind: 'leave'; readonly index: number }
  | { readonly at: number; readonly kind: 'address'; readonly index: number; readonly address: string }
  | { readonly at: number; readonly kind: 'oob-delete'; readonly index: number }
  | { readonly at: number; readonly kind: 'throttle'; readonly on: boolean };

export type JoinCause = 'burst' | 'churn' | 'throttle';

/** Offsets (ms from start) of the scripted events, scaled to the run's duration. */
export function milestones(s: Scenario): {
  burstAt: number;
  addressAt: number;
  oobDeleteAt: number;
  throttleFrom: number;
  throttleTo: number;
  scaleDownAt: number;
  quietFrom: number;
} {
  const d = s.durationMs;
  return {
    burstAt: d / 12,
    addressAt: d / 3,
    oobDeleteAt: (5 * d) / 12,
    throttleFrom: d / 2,
    throttleTo: (11 * d) / 20,
    scaleDownAt: (3 * d) / 4,
    // The last stretch is quiet, so the final state shows where each mode converged.
    quietFrom: d - Math.min(2 * MINUTE, d / 10),
  };
}

export function nodeName(index: number): string {
  return `node-${String(index).padStart(5, '0')}`;
}

export function podCIDR(index: number): string {
  return `10.${(index >> 8) & 255}.${index & 255}.0/24`;
}

/** InternalIP in a 172.16.0.0/12 VPC; `generation` > 0 gives the address after a change. */
export function internalIP(index: number, generation = 0): string {
  const n = index + 10 + generation * 0x40000;
  return `172.${16 + ((n >> 16) & 15)}.${(n >> 8) & 255}.${n & 255}`;
}

export function validateScenario(s: Scenario): string[] {
  const errors: string[] = [];
  const int = (v: number): boolean => Number.isInteger(v) && v >= 0;
  if (!int(s.nodes)) errors.push('--nodes must be a non-negative integer');
  if (!(s.durationMs >= 60_000)) errors.push('--duration must be at least 1m');
  if (!int(s.churn)) errors.push('--churn must be a non-negative integer');
  if (!int(s.burst)) errors.push('--burst must be a non-negative integer');
  if (!int(s.seed)) errors.push('--seed must be a non-negative integer');
  if (!(s.cloudLatencyMs >= 0)) errors.push('--cloud-latency must be >= 0');
  if (!(s.cloudWriteRatePerSec >= 0)) errors.push('--cloud-rate-limit must be >= 0');
  if (!(s.heartbeatIntervalMs === 0 || (s.heartbeatIntervalMs >= 1000 && s.heartbeatIntervalMs % 1000 === 0)))
    errors.push('--heartbeat must be 0 or a whole number of seconds');
  if (errors.length === 0 && totalNodeIndices(s) > MAX_NODE_INDEX)
    errors.push(`too many nodes for /24 pod CIDRs in ${CLUSTER_CIDR}: ${totalNodeIndices(s)}`);
  return errors;
}

function churnCount(s: Scenario): number {
  return Math.round((s.churn * s.durationMs) / (10 * MINUTE));
}

function totalNodeIndices(s: Scenario): number {
  return s.nodes + s.burst + churnCount(s) + (s.throttleWindow ? s.throttleJoins : 0);
}

/**
 * The scripted timeline, sorted by time. Nodes that leave are picked among
 * initial and churned-in nodes that have been up for a minute; the address
 * change and the out-of-band delete hit initial nodes that stay.
 */
export function buildTimeline(s: Scenario): SimEvent[] {
  const random = seededRandom(s.seed);
  const m = milestones(s);
  const events: SimEvent[] = [];
  let nextIndex = s.nodes;
  const stay = new Set<number>();

  if (s.burst > 0) {
    const burst: number[] = [];
    for (let i = 0; i < s.burst; i++) {
      const index = nextIndex++;
      burst.push(index);
      events.push({ at: m.burstAt + Math.round(random() * 30_000), kind: 'join', index, cause: 'burst' });
    }
    // The autoscaler removes the nodes it added, in bulk, over a minute.
    for (const index of burst)
      events.push({ at: m.scaleDownAt + Math.round(random() * 60_000), kind: 'leave', index });
  }
  if (s.addressChange && s.nodes > 0) {
    const index = pick(random, s.nodes);
    stay.add(index);
    events.push({ at: m.addressAt, kind: 'address', index, address: internalIP(index, 1) });
  }
  if (s.outOfBandDelete && s.nodes > 0) {
    let index = pick(random, s.nodes);
    if (stay.has(index) && s.nodes > 1) index = (index + 1) % s.nodes;
    stay.add(index);
    events.push({ at: m.oobDeleteAt, kind: 'oob-delete', index });
  }
  if (s.throttleWindow) {
    events.push({ at: m.throttleFrom, kind: 'throttle', on: true });
    events.push({ at: m.throttleTo, kind: 'throttle', on: false });
    const span = m.throttleTo - m.throttleFrom;
    for (let i = 0; i < s.throttleJoins; i++) {
      const at = m.throttleFrom + Math.round(((i + 0.5 + 0.5 * random()) * span * 0.6) / s.throttleJoins);
      events.push({ at, kind: 'join', index: nextIndex++, cause: 'throttle' });
    }
  }
  events.push(...churnEvents(s, random, () => nextIndex++, stay, m.quietFrom));
  // Stable sort: equal times keep generation order, so the timeline is a pure function of the seed.
  return events.sort((a, b) => a.at - b.at);
}

function churnEvents(
  s: Scenario,
  random: () => number,
  allocate: () => number,
  stay: ReadonlySet<number>,
  quietFrom: number,
): SimEvent[] {
  const count = churnCount(s);
  if (count === 0) return [];
  const joins = Array.from({ length: count }, () => Math.round(random() * quietFrom)).sort((a, b) => a - b);
  const leaves = Array.from({ length: count }, () => Math.round(random() * quietFrom)).sort((a, b) => a - b);
  const present: { index: number; since: number }[] = [];
  for (let i = 0; i < s.nodes; i++) if (!stay.has(i)) present.push({ index: i, since: -Infinity });
  const out: SimEvent[] = [];
  let j = 0;
  for (const at of leaves) {
    for (; j < joins.length && joins[j]! <= at; j++) {
      const index = allocate();
      out.push({ at: joins[j]!, kind: 'join', index, cause: 'churn' });
      present.push({ index, since: joins[j]! });
    }
    const eligible = present.filter((p) => at - p.since >= MINUTE);
    if (eligible.length === 0) continue;
    const victim = eligible[pick(random, eligible.length)]!;
    present.splice(present.indexOf(victim), 1);
    out.push({ at, kind: 'leave', index: victim.index });
  }
  for (; j < joins.length; j++) out.push({ at: joins[j]!, kind: 'join', index: allocate(), cause: 'churn' });
  return out;
}

/** Scripted events other than heartbeats that a node watch can see (joins, leaves, address changes). */
export function nodeEventCount(events: readonly SimEvent[]): number {
  return events.filter((e) => e.kind === 'join' || e.kind === 'leave' || e.kind === 'address').length;
}
