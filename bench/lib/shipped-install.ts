// The package as a user gets it (test/support/packed-install.ts). The
// shipped-executable scenario runs the installed bin/cloud-route-controller.js,
// which uses dist/ under node_modules exactly as in production.
import { execFileSync } from 'node:child_process';
import { buildPackInstall, installTarball } from '../../test/support/packed-install.ts';
import type { PackedInstall } from '../../test/support/packed-install.ts';

export type ShippedInstall = PackedInstall;
export { installTarball };

export function installShipped(): ShippedInstall {
  return buildPackInstall('routebench-shipped-');
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
