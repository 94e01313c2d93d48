// A cloud-controller-manager's own route code behind a command line (testenv/aws-upstream,
// testenv/gce-upstream), as the handover tests run it: each call gets a fresh directory with the
// CCM's cloud config (and what else it reads), a clean environment, and runs one ListRoutes or
// CreateRoute, the way that CCM's route controller would call it.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** A route as upstream's ListRoutes returns it (cloudprovider.Route). */
export interface UpstreamRoute {
  name: string;
  targetNode: string;
  destinationCIDR: string;
  blackhole: boolean;
}

/** The route upstream's CreateRoute(clusterName, nameHint, {TargetNode, DestinationCIDR}) is given. */
export interface UpstreamCreate {
  nameHint: string;
  node: string;
  cidr: string;
}

export interface UpstreamRun {
  /** e.g. aws-upstream; labels the temp directory and the errors. */
  readonly name: string;
  readonly bin: string;
  /** Files written into the call's directory, by name; `-<flag> <file>` passes each one. */
  readonly files: Readonly<Record<string, { flag: string; text: string }>>;
  /** Added to PATH and HOME (the call's directory), nothing else of the test's environment. */
  readonly env: Readonly<Record<string, string>>;
}

/** Runs the binary once with `args` after the file flags; its stdout. */
export async function runUpstream(run: UpstreamRun, args: readonly string[]): Promise<string> {
  const dir = mkdtempSync(path.join(os.tmpdir(), `${run.name}-`));
  try {
    const argv: string[] = [];
    for (const [file, { flag, text }] of Object.entries(run.files)) {
      writeFileSync(path.join(dir, file), text);
      argv.push(flag, path.join(dir, file));
    }
    const env: NodeJS.ProcessEnv = { PATH: process.env['PATH'] ?? '', HOME: dir, ...run.env };
    try {
      const { stdout } = await execFileAsync(run.bin, [...argv, ...args], {
        env,
        encoding: 'utf8',
        timeout: 120_000,
      });
      return stdout;
    } catch (err) {
      const stderr = (err as { stderr?: string }).stderr ?? '';
      throw new Error(`${run.name} ${args.join(' ')} failed: ${String(err)}\n${stderr}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Upstream's ListRoutes(clusterName), sorted by destination. */
export async function upstreamList(run: UpstreamRun, clusterName: string): Promise<UpstreamRoute[]> {
  const routes = JSON.parse(await runUpstream(run, ['list', clusterName])) as UpstreamRoute[];
  return routes.sort((a, b) => a.destinationCIDR.localeCompare(b.destinationCIDR));
}

/** Upstream's CreateRoute(clusterName, nameHint, {TargetNode: node, DestinationCIDR: cidr}). */
export async function upstreamCreate(
  run: UpstreamRun,
  clusterName: string,
  r: UpstreamCreate,
): Promise<void> {
  await runUpstream(run, ['create', clusterName, r.nameHint, r.node, r.cidr]);
}
