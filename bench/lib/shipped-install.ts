// The package as a user gets it: `npm run build`, `npm pack`, then the tarball
// installed into an empty directory with npm (from its cache when warm). The
// shipped-executable scenario runs the installed bin/cloud-route-controller.js,
// which uses dist/ under node_modules exactly as in production.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const repoRoot = path.resolve(import.meta.dirname, '..', '..');

export interface ShippedInstall {
  readonly dir: string;
  /** The installed bin/cloud-route-controller.js. */
  readonly bin: string;
  readonly tarballKB: number;
  remove(): void;
}

function npm(args: string[], cwd: string): string {
  return execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

export function installShipped(): ShippedInstall {
  npm(['run', 'build'], repoRoot);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'routebench-shipped-'));
  const packed = JSON.parse(npm(['pack', '--json', '--pack-destination', dir], repoRoot)) as {
    filename: string;
  }[];
  return installTarball(path.join(dir, packed[0]!.filename), dir);
}

/** Installs a packed tarball into `dir` (the tarball may already be in it). */
export function installTarball(tarball: string, dir: string): ShippedInstall {
  fs.writeFileSync(path.join(dir, 'package.json'), '{"name":"routebench-shipped","private":true}\n');
  npm(['install', '--no-audit', '--no-fund', '--prefer-offline', '--omit=dev', tarball], dir);
  return {
    dir,
    bin: path.join(dir, 'node_modules', 'cloud-route-controller', 'bin', 'cloud-route-controller.js'),
    tarballKB: fs.statSync(tarball).size / 1024,
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/** Peak resident memory (MB) of a fresh Node that imports `specifier` from the install. */
export function importPeakMB(install: ShippedInstall, specifier: string): number {
  const out = execFileSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      // VmHWM, not resourceUsage().maxRSS: Linux carries ru_maxrss over exec, so a child of
      // this (larger) process would report the parent's resident size.
      `await import(${JSON.stringify(specifier)}); const fs = await import('node:fs'); ` +
        `const m = /VmHWM:\\s+(\\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8')); ` +
        `process.stdout.write(String(m ? Number(m[1]) : process.resourceUsage().maxRSS));`,
    ],
    { cwd: install.dir, encoding: 'utf8' },
  );
  return Number(out) / 1024;
}
