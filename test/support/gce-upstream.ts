// cloud-provider-gcp's own route code (testenv/gce-upstream: k8s.io/cloud-provider-gcp/providers
// v0.28.2's gce Cloud behind a command line) for the gce handover test: each call builds the cloud
// from the CCM's gce.conf, as that CCM does, and runs one ListRoutes or CreateRoute against the GCE
// fake, with the fake as its metadata server.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { isExecutable } from './testenv-binaries.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const execFileAsync = promisify(execFile);

/** GCE_UPSTREAM, else the binary scripts/gce-upstream.sh built for the current sources. */
export function gceUpstreamPath(): string | undefined {
  const fromEnv = process.env['GCE_UPSTREAM'];
  if (fromEnv) return isExecutable(fromEnv) ? fromEnv : undefined;
  try {
    const out = execFileSync('bash', [path.join(ROOT, 'scripts', 'gce-upstream.sh'), 'path'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const bin = /^GCE_UPSTREAM=(.*)$/m.exec(out)?.[1] ?? '';
    return bin !== '' && isExecutable(bin) ? bin : undefined;
  } catch {
    return undefined;
  }
}

/** `{ skip }` for node:test; with CI=true a missing binary fails instead, so a broken build cannot pass. */
export function gceUpstreamSkip(): { skip: string | false } {
  if (gceUpstreamPath() !== undefined) return { skip: false };
  const reason = 'cloud-provider-gcp not built: run scripts/gce-upstream.sh build (or set GCE_UPSTREAM)';
  if (process.env['CI'] === 'true') throw new Error(`${reason}; required when CI=true`);
  return { skip: reason };
}

/** A route as upstream's ListRoutes returns it (cloudprovider.Route). */
export interface UpstreamRoute {
  name: string;
  targetNode: string;
  destinationCIDR: string;
  blackhole: boolean;
}

/**
 * Runs the binary on the CCM's gce.conf. `metadataHost` (host:port) stands in for the instance's
 * metadata server: upstream asks it for the local zone and project gce.conf leaves out, and for
 * the token that authenticates its token-url request.
 */
async function runUpstream(conf: string, metadataHost: string, args: string[]): Promise<string> {
  const bin = gceUpstreamPath();
  if (bin === undefined) throw new Error('cloud-provider-gcp not built: run scripts/gce-upstream.sh build');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'gce-upstream-'));
  try {
    writeFileSync(path.join(dir, 'gce.conf'), conf);
    const env: NodeJS.ProcessEnv = {
      PATH: process.env['PATH'] ?? '',
      HOME: dir,
      GCE_METADATA_HOST: metadataHost,
    };
    const argv = ['-cloud-config', path.join(dir, 'gce.conf'), ...args];
    try {
      const { stdout } = await execFileAsync(bin, argv, { env, encoding: 'utf8', timeout: 120_000 });
      return stdout;
    } catch (err) {
      const stderr = (err as { stderr?: string }).stderr ?? '';
      throw new Error(`gce-upstream ${args.join(' ')} failed: ${String(err)}\n${stderr}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Upstream's ListRoutes(clusterName), sorted by destination. */
export async function upstreamListRoutes(
  conf: string,
  metadataHost: string,
  clusterName: string,
): Promise<UpstreamRoute[]> {
  const routes = JSON.parse(await runUpstream(conf, metadataHost, ['list', clusterName])) as UpstreamRoute[];
  return routes.sort((a, b) => a.destinationCIDR.localeCompare(b.destinationCIDR));
}

/** Upstream's CreateRoute(clusterName, nameHint, {TargetNode: node, DestinationCIDR: cidr}). */
export async function upstreamCreateRoute(
  conf: string,
  metadataHost: string,
  clusterName: string,
  route: { nameHint: string; node: string; cidr: string },
): Promise<void> {
  await runUpstream(conf, metadataHost, ['create', clusterName, route.nameHint, route.node, route.cidr]);
}
