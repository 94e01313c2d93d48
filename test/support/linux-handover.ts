// docs/migration.md's Linux blocks and a Linux router whose `ip` runs are logged, for
// test/integration/linux-handover.test.ts.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { NodeHost, Topology } from './netns.ts';

const DOC = fs.readFileSync(path.resolve(import.meta.dirname, '..', '..', 'docs', 'migration.md'), 'utf8');

/** The sh block after `<!-- migration-test: <name> -->`, its list indentation removed. */
export function docBlock(name: string): string {
  const marker = DOC.indexOf(`<!-- migration-test: ${name} -->`);
  assert.notEqual(marker, -1, `docs/migration.md has no block marked ${name}`);
  const m = /\n( *)```sh\n([\s\S]*?)\n *```/.exec(DOC.slice(marker));
  assert.ok(m, `no sh block after the ${name} marker`);
  const indent = m[1]!.length;
  return m[2]!
    .split('\n')
    .map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length)))
    .join('\n');
}

/** The doc's cluster CIDRs are the topology's. */
export function forTopology(script: string, topo: Topology): string {
  return script
    .replaceAll('10.244.0.0/16', topo.clusterCIDRv4)
    .replaceAll('fd00:10:244::/56', topo.clusterCIDRv6);
}

/** A CCM's command line (k8s.io/cloud-provider v0.37) with only the route controller on. */
export function ccmArgs(config: string, topo: Topology): string[] {
  return [
    '--v=2',
    '--cloud-provider=linux',
    `--cloud-config=${config}`,
    '--controllers=route',
    '--configure-cloud-routes=true',
    '--allocate-node-cidrs=true',
    `--cluster-cidr=${topo.clusterCIDRv4},${topo.clusterCIDRv6}`,
    '--cluster-name=kubernetes',
    '--use-service-account-credentials',
    '--bind-address=127.0.0.1',
  ];
}

/** A router whose `ip` runs are logged: its cloud config names the logging wrapper. */
export class Router {
  readonly topo: Topology;
  readonly config: string;
  readonly #log: string;
  constructor(topo: Topology, dir: string, name: string, protocol?: number) {
    this.topo = topo;
    this.#log = path.join(dir, `${name}-ip.log`);
    const wrapper = path.join(dir, `${name}-ip`);
    fs.writeFileSync(wrapper, `#!/bin/sh\nprintf '%s\\n' "$*" >> '${this.#log}'\nexec ip "$@"\n`, {
      mode: 0o755,
    });
    this.config = path.join(dir, `${name}.yaml`);
    const proto = protocol === undefined ? '' : `protocol: ${protocol}\n`;
    fs.writeFileSync(this.config, `netns: ${topo.router}\nipCommand: ${wrapper}\n${proto}`);
  }

  /** The route changes the daemon made through `ip`. */
  writes(): string[] {
    const runs = fs.existsSync(this.#log) ? fs.readFileSync(this.#log, 'utf8').split('\n') : [];
    return runs.filter((l) => / route (add|replace|change|append|del|flush)\b/.test(l)).sort();
  }

  async table(): Promise<string> {
    const [v4, v6] = await Promise.all([4, 6].map((f) => this.topo.ip(this.topo.router, [`-${f}`, 'route'])));
    return `${v4}${v6}`;
  }

  /** The previous writer's view: `<dst> via <gateway>` of its protocol in table main. */
  async listing(proto: string): Promise<string[]> {
    const out: string[] = [];
    for (const f of [4, 6]) {
      const json = await this.topo.ip(this.topo.router, [
        `-${f}`,
        '-json',
        'route',
        'show',
        'table',
        'main',
        'proto',
        proto,
      ]);
      for (const r of JSON.parse(json || '[]') as { dst: string; gateway?: string }[])
        out.push(`${r.dst} via ${r.gateway ?? '-'}`);
    }
    return out.sort();
  }

  /** A shell script in the router's namespace; it must succeed and print no error. */
  async sh(script: string): Promise<void> {
    const r = await this.topo.exec(this.topo.router, ['bash', '-c', script], { check: false });
    assert.deepEqual([r.code, r.stderr], [0, ''], script);
  }
}

/** `<pod CIDR> via <InternalIP>` for each node and family. */
export function expected(routes: [NodeHost, 4 | 6][]): string[] {
  return routes
    .map(([n, f]) =>
      f === 4 ? `${n.podCIDRv4} via ${n.internalIPv4}` : `${n.podCIDRv6} via ${n.internalIPv6}`,
    )
    .sort();
}
