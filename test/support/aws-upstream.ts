// cloud-provider-aws's own route code (testenv/aws-upstream: k8s.io/cloud-provider-aws v1.37.1's
// Routes behind a command line) for the aws handover test: each call builds the cloud from the
// CCM's INI cloud.conf, as that CCM does, and runs one ListRoutes or CreateRoute against moto.
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { isExecutable } from './testenv-binaries.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const execFileAsync = promisify(execFile);

/** AWS_UPSTREAM, else the binary scripts/aws-upstream.sh built for the current sources. */
export function awsUpstreamPath(): string | undefined {
  const fromEnv = process.env['AWS_UPSTREAM'];
  if (fromEnv) return isExecutable(fromEnv) ? fromEnv : undefined;
  try {
    const out = execFileSync('bash', [path.join(ROOT, 'scripts', 'aws-upstream.sh'), 'path'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const bin = /^AWS_UPSTREAM=(.*)$/m.exec(out)?.[1] ?? '';
    return bin !== '' && isExecutable(bin) ? bin : undefined;
  } catch {
    return undefined;
  }
}

/** `{ skip }` for node:test; with CI=true a missing binary fails instead, so a broken build cannot pass. */
export function awsUpstreamSkip(): { skip: string | false } {
  if (awsUpstreamPath() !== undefined) return { skip: false };
  const reason = 'cloud-provider-aws not built: run scripts/aws-upstream.sh build (or set AWS_UPSTREAM)';
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

/** A node as upstream's node informer holds it: it maps instances to nodes by providerID only. */
export interface UpstreamNode {
  name: string;
  providerID: string;
}

/** Runs the binary on the CCM's cloud.conf and nodes; moto's test credentials, no IMDS. */
async function runUpstream(conf: string, nodes: readonly UpstreamNode[], args: string[]): Promise<string> {
  const bin = awsUpstreamPath();
  if (bin === undefined) throw new Error('cloud-provider-aws not built: run scripts/aws-upstream.sh build');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'aws-upstream-'));
  try {
    writeFileSync(path.join(dir, 'cloud.conf'), conf);
    writeFileSync(path.join(dir, 'nodes.json'), JSON.stringify(nodes));
    const env: NodeJS.ProcessEnv = {
      PATH: process.env['PATH'] ?? '',
      HOME: dir,
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      AWS_EC2_METADATA_DISABLED: 'true',
    };
    const argv = [
      '-cloud-config',
      path.join(dir, 'cloud.conf'),
      '-nodes',
      path.join(dir, 'nodes.json'),
      ...args,
    ];
    try {
      const { stdout } = await execFileAsync(bin, argv, { env, encoding: 'utf8', timeout: 120_000 });
      return stdout;
    } catch (err) {
      const stderr = (err as { stderr?: string }).stderr ?? '';
      throw new Error(`aws-upstream ${args.join(' ')} failed: ${String(err)}\n${stderr}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Upstream's ListRoutes(clusterName), sorted by destination. */
export async function upstreamListRoutes(
  conf: string,
  nodes: readonly UpstreamNode[],
  clusterName: string,
): Promise<UpstreamRoute[]> {
  const routes = JSON.parse(await runUpstream(conf, nodes, ['list', clusterName])) as UpstreamRoute[];
  return routes.sort((a, b) => a.destinationCIDR.localeCompare(b.destinationCIDR));
}

/** Upstream's CreateRoute(clusterName, nameHint, {TargetNode: node, DestinationCIDR: cidr}). */
export async function upstreamCreateRoute(
  conf: string,
  nodes: readonly UpstreamNode[],
  clusterName: string,
  route: { nameHint: string; node: string; cidr: string },
): Promise<void> {
  await runUpstream(conf, nodes, ['create', clusterName, route.nameHint, route.node, route.cidr]);
}
