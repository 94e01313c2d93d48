// The package as a user gets it: `npm run build`, `npm pack`, then the tarball installed with
// npm (from its cache when warm) into an empty directory, where imports resolve as in a
// user's project and the installed bin runs dist/.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const repoRoot = path.resolve(import.meta.dirname, '..', '..');

export interface PackedInstall {
  readonly dir: string;
  /** The installed package: <dir>/node_modules/cloud-route-controller. */
  readonly packageDir: string;
  /** The installed bin/cloud-route-controller.js. */
  readonly bin: string;
  readonly tarballKB: number;
  remove(): void;
}

function npm(args: string[], cwd: string): string {
  return execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Builds and packs this checkout, and installs the tarball into a new temporary directory. */
export function buildPackInstall(prefix = 'crc-packed-'): PackedInstall {
  npm(['run', 'build'], repoRoot);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const packed = JSON.parse(npm(['pack', '--json', '--pack-destination', dir], repoRoot)) as {
    filename: string;
  }[];
  return installTarball(path.join(dir, packed[0]!.filename), dir);
}

/** Installs a packed tarball into `dir` (the tarball may already be in it). */
export function installTarball(tarball: string, dir: string): PackedInstall {
  fs.writeFileSync(path.join(dir, 'package.json'), '{"name":"crc-packed-install","private":true}\n');
  npm(['install', '--no-audit', '--no-fund', '--prefer-offline', '--omit=dev', tarball], dir);
  const packageDir = path.join(dir, 'node_modules', 'cloud-route-controller');
  return {
    dir,
    packageDir,
    bin: path.join(packageDir, 'bin', 'cloud-route-controller.js'),
    tarballKB: fs.statSync(tarball).size / 1024,
    remove: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}
