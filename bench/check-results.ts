// Checks that bench/RESULTS.md and the README's targets table still say what
// the committed results say: every table row and bullet the report generator
// renders from bench/results/results.json must appear in them (cells compared
// trimmed). Run by CI, so published numbers cannot drift from their JSON.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Results } from './lib/results.ts';
import { briefTargetsTable, summaryMarkdown } from './report.ts';
import { parseCommandLine } from '../src/cli/script-args.ts';

const dir = import.meta.dirname;
const jsonPath = path.join(dir, 'results', 'results.json');
const mdPath = path.join(dir, 'RESULTS.md');
const readmePath = path.join(dir, '..', 'README.md');

/** Table rows compared cell by cell, so Prettier's column padding does not matter. */
function normalize(line: string): string {
  const l = line.trim();
  if (!l.startsWith('|')) return l.replace(/\s+/g, ' ');
  return l
    .split('|')
    .map((c) => c.trim())
    .join('|');
}

const isSeparator = (l: string): boolean => /^\|[\s|:-]+\|$/.test(l.trim());

export function missingLines(generated: string, published: string): string[] {
  const have = new Set(published.split('\n').map(normalize));
  return generated
    .split('\n')
    .filter((l) => (l.trim().startsWith('|') || l.startsWith('- ')) && !isSeparator(l))
    .filter((l) => !have.has(normalize(l)));
}

const USAGE = `Usage: node bench/check-results.ts

Checks that bench/RESULTS.md and the README's targets table say what
bench/results/results.json says; exits 1 naming the missing lines when not.
`;

if (import.meta.main) {
  parseCommandLine(USAGE, { options: {} });
  const results = JSON.parse(fs.readFileSync(jsonPath, 'utf8')) as Results;
  let ok = true;
  for (const [file, generated] of [
    [mdPath, summaryMarkdown(results, 'results/')],
    [readmePath, briefTargetsTable(results)],
  ] as const) {
    const missing = missingLines(generated, fs.readFileSync(file, 'utf8'));
    if (missing.length === 0) continue;
    ok = false;
    process.stderr.write(
      `${path.relative(process.cwd(), file)} is out of step with bench/results/results.json; ${missing.length} generated line(s) missing:\n` +
        missing
          .slice(0, 20)
          .map((l) => `  ${l}\n`)
          .join(''),
    );
  }
  if (!ok) {
    process.stderr.write(
      'Regenerate with `node bench/report.ts bench/results/results.json bench/results results/` and copy summary.md in.\n',
    );
    process.exit(1);
  }
  process.stdout.write(
    `bench/RESULTS.md and the README's targets match bench/results/results.json (${results.meta.startedAt})\n`,
  );
}
