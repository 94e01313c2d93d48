// Peak resident memory of importing the packed library's entry points, next to an empty Node
// process, in one run (the quick check behind the `shipped` scenario's library-import numbers;
// the full benchmark run publishes those).
//
//   node bench/import-peak.ts [--runs N] [--tarball FILE] [SPECIFIER...]
//
// Without --tarball it runs `npm run build` and `npm pack` on this checkout; the tarball is
// installed with npm into a temporary directory. Prints the median of N runs (default 5) in MB.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { importPeakMB, installShipped, installTarball } from './lib/shipped-install.ts';
import type { ShippedInstall } from './lib/shipped-install.ts';
import { parseCommandLine, usageError } from '../src/cli/script-args.ts';

const USAGE = `Usage: node bench/import-peak.ts [--runs N] [--tarball FILE] [SPECIFIER...]

Peak resident memory of importing the packed library's entry points (default
cloud-route-controller and cloud-route-controller/aws), next to an empty Node
process; prints the median of N runs in MB. Without --tarball it builds and packs
this checkout.

Flags:
  --runs N         runs per entry point (default 5)
  --tarball FILE   install this package tarball instead of packing the checkout
  -h, --help       this help
`;

const { values, positionals } = parseCommandLine(USAGE, {
  allowPositionals: true,
  options: { runs: { type: 'string', default: '5' }, tarball: { type: 'string' } },
});
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) usageError(`--runs ${values.runs}: not a positive integer`);
const specifiers =
  positionals.length > 0 ? positionals : ['cloud-route-controller', 'cloud-route-controller/aws'];

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Peak resident MB of a Node process that imports nothing, the same way importPeakMB measures. */
function emptyPeakMB(install: ShippedInstall): number {
  const out = execFileSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const fs = await import('node:fs'); ` +
        `const m = /VmHWM:\\s+(\\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8')); ` +
        `process.stdout.write(String(Number(m[1])));`,
    ],
    { cwd: install.dir, encoding: 'utf8' },
  );
  return Number(out) / 1024;
}

const install = values.tarball
  ? installTarball(path.resolve(values.tarball), fs.mkdtempSync(path.join(os.tmpdir(), 'import-peak-')))
  : installShipped();
try {
  const rows: [string, number[]][] = [
    ['(empty Node process)', []],
    ...specifiers.map((s): [string, number[]] => [s, []]),
  ];
  for (let i = 0; i < runs; i++) {
    rows[0]![1].push(emptyPeakMB(install));
    for (const [k, row] of rows.slice(1).entries()) row[1].push(importPeakMB(install, specifiers[k]!));
  }
  process.stdout.write(
    `node ${process.version}, tarball ${install.tarballKB.toFixed(0)} KB, median of ${runs}\n`,
  );
  for (const [name, xs] of rows) {
    process.stdout.write(
      `${name.padEnd(34)} ${median(xs).toFixed(1).padStart(6)} MB  (${xs.map((x) => x.toFixed(1)).join(' ')})\n`,
    );
  }
} finally {
  install.remove();
}
