// `npm run docs:verify`: fails when the docs name a flag, SPEC rule, file or
// metric that does not exist, differ from the code's RBAC rules or providers,
// hold a stale generated part, or a table wider than 160 characters.
import * as path from 'node:path';
import { parseCommandLine } from '../src/cli/script-args.ts';
import { verifyDocs } from './docs/checks.ts';
import { GEN_COMMAND } from './docs/generate.ts';
import { DocTree } from './docs/tree.ts';

const USAGE = `Usage: npm run docs:verify

Checks README.md, SECURITY.md and docs/ against the code: flags (src/cli/flag-table.ts),
SPEC rules (docs/SPEC.md), file paths, metrics, RBAC (deploy/ and the chart), the
built-in providers, generated parts (${GEN_COMMAND} rewrites them) and table widths.
Prints one line per problem and exits 1 when there is any.
`;

parseCommandLine(USAGE, { options: {} });
const problems = await verifyDocs(new DocTree(path.join(import.meta.dirname, '..')));
for (const p of problems) process.stderr.write(`${p.file}:${p.line}: ${p.message}\n`);
if (problems.length > 0) {
  process.stderr.write(`docs: ${problems.length} problem(s)\n`);
  process.exit(1);
}
process.stdout.write(
  'docs: flags, rules, paths, metrics, RBAC, providers, generated parts and tables agree with the code\n',
);
