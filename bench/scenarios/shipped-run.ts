// The `shipped` scenario as bench/run.ts calls it: install the packed tarball,
// measure the library's import, then the daemons and the Go peer per size,
// then the idle hour. Providers whose cloud is missing here (no moto, no
// network namespaces) are skipped with the reason.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BenchCluster } from '../lib/apiserver.ts';
import { importPeakMB, installShipped } from '../lib/shipped-install.ts';
import {
  shippedIdleSession,
  shippedKubeconfig,
  shippedMemorySession,
  type ShippedIdleConfig,
  type ShippedResults,
} from './shipped.ts';
import { availableProviders } from './shipped-providers.ts';

export interface ShippedConfig {
  readonly nodes: readonly number[];
  readonly settleMs: number;
  readonly idle: ShippedIdleConfig;
}

const SPECIFIERS = [
  'cloud-route-controller',
  'cloud-route-controller/memory',
  'cloud-route-controller/linux',
  'cloud-route-controller/hcloud',
  'cloud-route-controller/aws',
  'cloud-route-controller/azure',
  'cloud-route-controller/gce',
  'cloud-route-controller/openstack',
];

export async function shippedScenario(
  c: BenchCluster,
  cfg: ShippedConfig,
  opts: { withGo: boolean; logDir: string; log: (msg: string) => void; save: (r: ShippedResults) => void },
): Promise<ShippedResults> {
  opts.log('shipped: npm run build, npm pack, npm install of the tarball');
  const install = installShipped();
  const dataDir = fs.mkdtempSync(path.join(install.dir, 'data-'));
  const results: ShippedResults = {
    libraryImportMB: {},
    tarballKB: install.tarballKB,
    memory: [],
    idle: [],
    skipped: {},
  };
  try {
    for (const s of SPECIFIERS) results.libraryImportMB[s] = importPeakMB(install, s);
    const { providers, skipped } = await availableProviders();
    Object.assign(results.skipped, skipped);
    if (!opts.withGo)
      results.skipped['go'] = 'upstream peer missing: run `bash scripts/bench-build-upstream.sh`';
    const kubeconfig = await shippedKubeconfig(c);
    const o = {
      install,
      kubeconfig,
      providers,
      settleMs: cfg.settleMs,
      logDir: opts.logDir,
      dataDir,
      withGo: opts.withGo,
    };
    for (const n of cfg.nodes) {
      opts.log(`shipped: daemons at ${n} nodes`);
      results.memory.push(...(await shippedMemorySession(c, n, o)));
      opts.save(results);
    }
    opts.log(`shipped: idle, ${cfg.idle.nodes} heartbeating nodes`);
    results.idle.push(...(await shippedIdleSession(c, cfg.idle, o)));
    opts.save(results);
  } finally {
    await c.admin.deleteAllNodes();
    install.remove();
  }
  return results;
}
