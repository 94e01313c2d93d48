import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { registerBuiltinProviders } from './builtin.ts';
import { registerCloudProviderLoader, resolveCloudProvider } from './registry.ts';

describe('provider registry (out-of-tree plug-ins)', () => {
  registerBuiltinProviders();

  it('resolves a built-in provider by name', async () => {
    const f = await resolveCloudProvider('memory');
    const p = await f('latency: 1ms', { get: () => undefined, list: () => [] });
    assert.equal(p.name, 'memory');
    assert.ok(p.routes());
  });

  it('resolves a path whose default export is a factory', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'crc-plugin-'));
    const file = path.join(dir, 'my-provider.mjs');
    writeFileSync(
      file,
      `export default (config, nodes) => ({ name: 'mine:' + config + ':' + nodes.list().length, routes: () => undefined });\n`,
    );
    const f = await resolveCloudProvider(file);
    const p = await f('cfg', { get: () => undefined, list: () => [] });
    assert.equal(p.name, 'mine:cfg:0');
  });

  it('an unknown name lists the registered providers', async () => {
    await assert.rejects(resolveCloudProvider('nope'), {
      message: 'unknown cloud provider "nope"; registered: aws, azure, gce, hcloud, linux, memory, openstack',
    });
  });

  it('a loader runs on first resolution only; a failed load is retried on the next', async () => {
    let loads = 0;
    let fail = true;
    const factory = () => ({ name: 'lazy', routes: () => undefined });
    registerCloudProviderLoader('lazy-test', () => {
      loads++;
      return fail ? Promise.reject(new Error('boom')) : Promise.resolve(factory);
    });
    assert.equal(loads, 0);
    await assert.rejects(resolveCloudProvider('lazy-test'), { message: 'boom' });
    fail = false;
    assert.equal(await resolveCloudProvider('lazy-test'), factory);
    assert.equal(await resolveCloudProvider('lazy-test'), factory);
    assert.equal(loads, 2);
  });

  it('a module without a factory default export is refused clearly', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'crc-plugin-'));
    const file = path.join(dir, 'bad.mjs');
    writeFileSync(file, 'export const x = 1;\n');
    await assert.rejects(resolveCloudProvider(file), /has no default export that is a provider factory/);
  });
});
