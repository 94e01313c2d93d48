// Plug-ins load on demand: the library's main entry loads no cloud SDK, and a
// built-in provider's code is imported only when its factory is called.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';

const index = pathToFileURL(path.join(import.meta.dirname, '..', 'index.ts')).href;

/** Runs `body` in a fresh Node process that records every module it loads; returns the URLs. */
function loaded(body: string): string[] {
  const script = `
    import { registerHooks } from 'node:module';
    const seen = [];
    registerHooks({ resolve(spec, ctx, next) { const r = next(spec, ctx); seen.push(r.url); return r; } });
    const lib = await import(${JSON.stringify(index)});
    ${body}
    process.stdout.write(JSON.stringify(seen));
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  return JSON.parse(out) as string[];
}

const aws = (urls: string[]): string[] => urls.filter((u) => u.includes('@aws-sdk'));
const plugin = (urls: string[], dir: string): string[] => urls.filter((u) => u.includes(`/cloud/${dir}/`));

describe('built-in plug-ins load on demand', () => {
  it('importing the library and registering the built-ins loads no cloud SDK and no plug-in', () => {
    const urls = loaded(`lib.registerBuiltinProviders();`);
    assert.ok(
      urls.some((u) => u.endsWith('/index.ts')),
      'the hook saw the library load',
    );
    assert.deepEqual(aws(urls), []);
    for (const dir of ['aws', 'hcloud', 'linux']) assert.deepEqual(plugin(urls, dir), [], dir);
  });

  it('the selected provider loads its own code only', () => {
    const urls = loaded(`
      lib.registerBuiltinProviders();
      const f = await lib.resolveCloudProvider('memory');
      const p = await f('latency: 1ms', { get: () => undefined, list: () => [] });
      if (p.name !== 'memory') throw new Error(p.name);
    `);
    assert.deepEqual(aws(urls), []);
    assert.deepEqual(plugin(urls, 'hcloud'), []);
  });

  it('--cloud-provider aws still works: its factory imports the SDK when called', () => {
    const urls = loaded(`
      lib.registerBuiltinProviders();
      const f = await lib.resolveCloudProvider('aws');
      try { await f('not: [valid', { get: () => undefined, list: () => [] }); } catch {}
    `);
    assert.ok(plugin(urls, 'aws').length > 0, 'the aws plug-in was imported');
  });
});

describe('package subpath exports', () => {
  it('every export points at a module the build emits from src/', async () => {
    const { readFileSync, existsSync } = await import('node:fs');
    const root = path.join(import.meta.dirname, '..', '..');
    const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
      exports: Record<string, { types: string; default: string }>;
    };
    assert.deepEqual(Object.keys(pkg.exports).sort(), ['.', './aws', './hcloud', './linux', './memory']);
    for (const [name, e] of Object.entries(pkg.exports)) {
      const src = e.default.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts');
      assert.ok(existsSync(path.join(root, src)), `${name} → ${src}`);
      assert.equal(e.types, e.default.replace(/\.js$/, '.d.ts'), name);
    }
  });
});
