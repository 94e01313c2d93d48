// Port security: a node's port drops packets from addresses it does not own, pod traffic
// included, unless the pod CIDR is in the port's allowed_address_pairs. As upstream does, a
// created route's pod CIDR is allowed on the port of its next hop, and a deleted route's pod
// CIDR leaves it. One write per port with every CIDR of the reconcile, guarded by the port's
// revision_number, so a concurrent change to the port (Nova, an operator) is never lost: it
// comes back as a 412, a conflict the controller retries (R24).
import { canonicalCIDR } from '../../core/cidr.ts';
import { isAbortError } from '../../core/errors.ts';
import type { CallOptions } from '../../core/types.ts';
import type { AddressPair, NeutronApi, Port } from './neutron.ts';
import { canonicalIP } from './targets.ts';

/** One route's need: its pod CIDR on the port of its next hop. */
export interface PairChange {
  readonly nexthop: string;
  readonly destination: string;
}

class RouterNetworks {
  readonly ids: Promise<string[]>;
  constructor(ids: Promise<string[]>) {
    this.ids = ids;
  }
}

export class AddressPairs {
  private readonly neutron: NeutronApi;
  private readonly routerId: string;

  constructor(neutron: NeutronApi, routerId: string) {
    this.neutron = neutron;
    this.routerId = routerId;
  }

  /** Allows each destination on its next hop's port; the error of each change that failed. */
  add(changes: readonly PairChange[], opts: CallOptions): Promise<(Error | undefined)[]> {
    return this.edit(changes, opts, (port, cidrs) => {
      const pairs = port.pairs;
      const have = new Set(pairs.map((p) => canonicalCIDR(p.ip_address) ?? p.ip_address));
      const missing = [...cidrs].filter((c) => !have.has(canonicalCIDR(c) ?? c));
      return missing.length === 0 ? undefined : [...pairs, ...missing.map((ip_address) => ({ ip_address }))];
    });
  }

  /**
   * Removes each destination from its next hop's port, except where `keep` still routes it to
   * an address of that same port (a node whose port got a new address keeps its pod CIDR).
   */
  remove(
    changes: readonly PairChange[],
    keep: readonly PairChange[],
    opts: CallOptions,
  ): Promise<(Error | undefined)[]> {
    return this.edit(changes, opts, (port, cidrs) => {
      const pairs = port.pairs;
      const own = new Set(port.fixedIps.map((ip) => canonicalIP(ip) ?? ip));
      const needed = new Set(
        keep
          .filter((k) => own.has(canonicalIP(k.nexthop) ?? k.nexthop))
          .map((k) => canonicalCIDR(k.destination) ?? k.destination),
      );
      const drop = new Set([...cidrs].map((c) => canonicalCIDR(c) ?? c).filter((c) => !needed.has(c)));
      const kept = pairs.filter((p) => !drop.has(canonicalCIDR(p.ip_address) ?? p.ip_address));
      return kept.length === pairs.length ? undefined : kept;
    });
  }

  private networks(opts: CallOptions): Promise<string[]> {
    const key = `openstack/router-networks/${this.routerId}`;
    const cached = opts.reconcile.scratch.get(key);
    if (cached instanceof RouterNetworks) return cached.ids;
    const ids = this.neutron.routerNetworkIds(this.routerId, opts.signal);
    opts.reconcile.scratch.set(key, new RouterNetworks(ids));
    // A failed lookup is not kept: the next call of the reconcile tries again.
    ids.catch(() => opts.reconcile.scratch.delete(key));
    return ids;
  }

  private async edit(
    changes: readonly PairChange[],
    opts: CallOptions,
    next: (port: Port, cidrs: ReadonlySet<string>) => AddressPair[] | undefined,
  ): Promise<(Error | undefined)[]> {
    const results: (Error | undefined)[] = changes.map(() => undefined);
    if (changes.length === 0) return results;
    const byHop = new Map<string, number[]>();
    changes.forEach((c, i) => {
      const hop = canonicalIP(c.nexthop) ?? c.nexthop;
      byHop.set(hop, [...(byHop.get(hop) ?? []), i]);
    });
    let networks: string[];
    try {
      networks = await this.networks(opts);
    } catch (err) {
      if (isAbortError(err)) throw err;
      return changes.map(() => err as Error);
    }
    await Promise.all(
      [...byHop].map(async ([hop, indexes]) => {
        try {
          const cidrs = new Set(indexes.map((i) => changes[i]!.destination));
          // No port (a node outside Neutron, or one already deleted): nothing to allow or revoke.
          for (const port of await this.neutron.portsByIp(hop, networks, opts.signal)) {
            if (port.portSecurity === false) continue;
            const pairs = next(port, cidrs);
            if (pairs !== undefined) await this.neutron.setAddressPairs(port, pairs, opts.signal);
          }
        } catch (err) {
          if (isAbortError(err)) throw err;
          for (const i of indexes) results[i] = err as Error;
        }
      }),
    );
    return results;
  }
}
