// Loaded with `node --import`: resolves the aws plug-in's door to the SDK (src/cloud/aws/ec2.ts)
// to a built bundle instead (AWS_EC2_BUNDLE: the path of a dist/cloud/aws/ec2.js), so the
// plug-in's own tests run against what the packed library ships. Each process appends the
// number of imports it redirected to AWS_EC2_BUNDLE_LOG, so a caller can tell that the hook
// took effect in every test file's process.
import * as fs from 'node:fs';
import { registerHooks } from 'node:module';
import { pathToFileURL } from 'node:url';

const bundle = process.env.AWS_EC2_BUNDLE;
const log = process.env.AWS_EC2_BUNDLE_LOG;
if (!bundle || !fs.existsSync(bundle)) throw new Error(`AWS_EC2_BUNDLE=${bundle ?? ''}: no such bundle`);
const target = pathToFileURL(bundle).href;
let redirected = 0;

registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context);
    if (!resolved.url.endsWith('/src/cloud/aws/ec2.ts')) return resolved;
    redirected++;
    return { url: target, format: 'module', shortCircuit: true };
  },
});

process.on('exit', () => {
  if (log) fs.appendFileSync(log, `${process.argv[1] ?? process.pid} ${redirected}\n`);
});
