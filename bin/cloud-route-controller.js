#!/usr/bin/env node
// The `cloud-route-controller` executable. Plain JavaScript so that it runs
// under any Node; the program itself is TypeScript, which Node >= 22.19 runs
// by stripping types. An installed package (under node_modules, where Node
// refuses to strip types) and the container image (which ships only dist/,
// about 25 MB less resident memory than the type-stripping loader) run the
// compiled dist/ instead.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { missingNodeFlags } from './node-flags.js';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 19)) {
  process.stderr.write(
    `error: cloud-route-controller needs Node.js >= 22.19 (this is ${process.version}).\n` +
      'In a checkout, run it with the pinned Node: npx cloud-route-controller ... or npx node bin/cloud-route-controller.js ...\n',
  );
  process.exit(1);
}

// V8's heap limits must be given at start-up (see node-flags.js): when they
// are missing, replace this process with one that has them (same pid, no
// wrapper process; nothing has been read or written yet). Where
// process.execve does not exist (Windows), run as is.
const flags = missingNodeFlags(process.execArgv, process.env.NODE_OPTIONS);
if (flags.length > 0 && typeof process.execve === 'function') {
  process.execve(process.execPath, [
    process.execPath,
    ...flags,
    ...process.execArgv,
    ...process.argv.slice(1),
  ]);
}

const here = fileURLToPath(new URL('.', import.meta.url));
const compiled = new URL('../dist/cli/main.js', import.meta.url);
const sources = new URL('../src/cli/main.ts', import.meta.url);
const useDist =
  (here.includes('/node_modules/') || !existsSync(fileURLToPath(sources))) &&
  existsSync(fileURLToPath(compiled));
const { main } = await import(useDist ? compiled.href : '../src/cli/main.ts');
process.exit(await main(process.argv.slice(2)));
