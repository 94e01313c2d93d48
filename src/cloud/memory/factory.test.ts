// The memory provider's config (what the daemon reads with --cloud-provider=memory).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { PermanentError } from '../../core/errors.ts';
import { memoryProviderFactory } from './factory.ts';

const nodes = { get: () => undefined, list: () => [] };
const scope = {
  signal: new AbortController().signal,
  reconcile: { id: 't', scratch: new Map<string, unknown>() },
};

function tmp(name: string, text: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memory-factory-'));
  const f = path.join(dir, name);
  fs.writeFileSync(f, text);
  return f;
}

describe('memory provider config', () => {
  it('initialRoutes seeds the cloud once; later writes do not touch the file', async () => {
    const file = tmp(
      'routes.json',
      JSON.stringify([{ name: 'r1', clusterName: 'k', targetNode: 'a', destinationCIDR: '10.1.0.0/24' }]),
    );
    const p = await memoryProviderFactory(`initialRoutes: ${JSON.stringify(file)}\n`, nodes);
    const routes = p.routes();
    assert.ok(routes, 'the memory cloud supports routes');
    const listed = await routes.listRoutes('k', scope);
    assert.deepEqual(
      listed.map((r) => `${r.destinationCIDR}->${r.targetNode}`),
      ['10.1.0.0/24->a'],
    );
    const before = fs.readFileSync(file, 'utf8');
    await routes.createRoute(
      'k',
      'hint',
      {
        name: '',
        targetNode: 'b',
        targetNodeAddresses: [],
        enableNodeAddresses: false,
        destinationCIDR: '10.1.1.0/24',
        blackhole: false,
      },
      scope,
    );
    assert.equal((await routes.listRoutes('k', scope)).length, 2);
    assert.equal(fs.readFileSync(file, 'utf8'), before, 'the seed file is read, never written');
  });

  it('an unreadable or malformed initialRoutes is a clear start-up error', () => {
    const missing = path.join(os.tmpdir(), 'no-such-dir-memory', 'routes.json');
    assert.throws(
      () => memoryProviderFactory(`initialRoutes: ${JSON.stringify(missing)}\n`, nodes),
      (e: unknown) => e instanceof PermanentError && /initialRoutes .*routes\.json/.test(e.message),
    );
    const bad = tmp('bad.json', JSON.stringify([{ destinationCIDR: 5 }]));
    assert.throws(
      () => memoryProviderFactory(`initialRoutes: ${JSON.stringify(bad)}\n`, nodes),
      (e: unknown) => e instanceof PermanentError && /must be a JSON array of routes/.test(e.message),
    );
  });
});
