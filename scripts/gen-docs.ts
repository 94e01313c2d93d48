// `npm run docs:gen`: rewrites the generated parts of the docs (between
// <!-- generated:NAME --> and <!-- /generated:NAME -->) from the code.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseCommandLine } from '../src/cli/script-args.ts';
import { BLOCK_NAMES, filesWithBlocks, regenerate } from './docs/generate.ts';
import { DocTree } from './docs/tree.ts';

const USAGE = `Usage: npm run docs:gen

Rewrites the generated parts of README.md, SECURITY.md and docs/ (${BLOCK_NAMES.join(', ')})
from the code: src/cli/flag-table.ts, the registered metrics, deploy/base/rbac.yaml.
`;

parseCommandLine(USAGE, { options: {} });
const tree = new DocTree(path.join(import.meta.dirname, '..'));
for (const file of filesWithBlocks(tree)) {
  const { text } = await regenerate(tree, file);
  if (text === tree.read(file)) continue;
  fs.writeFileSync(path.join(tree.root, file), text);
  process.stdout.write(`rewrote ${file}\n`);
}
