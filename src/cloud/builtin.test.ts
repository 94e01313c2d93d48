import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Imports `entry` in a fresh Node, then runs `after` (module text using `lib`),
 * and returns every module URL that was loaded (module.registerHooks sees
 * ESM imports and require() alike).
 */
function loadedModules(entry: string, after = ''): string[] {
  const script = `
    import { registerHooks } from 'node:module';
    const seen = [];
    registerHooks({ load(url, context, next) { seen.push(url); return next(url, context); } });
    const lib = await import(${JSON.stringify(new URL(entry, `file://${root}`).href)});
    ${after}
    process.stdout.write(JSON.stringify(seen));
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: root,
    encoding: 'utf8',
  });
  return JSON.parse(out) as string[];
}

const SDK = /\/node_modules\/(@aws-sdk|@azure|@azure-rest|google-auth-library|gaxios)\//;
const PLUGINS = /\/src\/cloud\/(aws|azure|gce|hcloud|linux|openstack)\//;

describe('built-in plug-ins load on demand', () => {
  it('the main entry loads no cloud SDK, no plug-in other than memory, no prom-client and no yaml', () => {
    const seen = loadedModules('src/index.ts');
    assert.ok(seen.some((u) => u.endsWith('/src/index.ts')));
    assert.deepEqual(
      seen.filter((u) => SDK.test(u) || PLUGINS.test(u) || /\/node_modules\/(prom-client|yaml)\//.test(u)),
      [],
    );
  });

  it('registering the built-ins loads none of them', () => {
    const seen = loadedModules('src/index.ts', 'lib.registerBuiltinProviders();');
    assert.deepEqual(
      seen.filter((u) => SDK.test(u) || PLUGINS.test(u)),
      [],
    );
  });

  it('resolving "aws" loads the AWS plug-in and its SDK, and no other plug-in', () => {
    const seen = loadedModules(
      'src/index.ts',
      `lib.registerBuiltinProviders();
       const f = await lib.resolveCloudProvider('aws');
       if (typeof f !== 'function') throw new Error('no factory');`,
    );
    assert.ok(seen.some((u) => u.endsWith('/src/cloud/aws/index.ts')));
    assert.ok(seen.some((u) => u.includes('/node_modules/@aws-sdk/client-ec2/')));
    assert.deepEqual(
      seen.filter(
        (u) => /\/src\/cloud\/(azure|hcloud|linux)\//.test(u) || u.includes('/node_modules/@azure/'),
      ),
      [],
    );
  });

  it('resolving "azure" loads the Azure plug-in and @azure/arm-network, no other plug-in, no AWS SDK and no MSAL', () => {
    const seen = loadedModules(
      'src/index.ts',
      `lib.registerBuiltinProviders();
       const f = await lib.resolveCloudProvider('azure');
       if (typeof f !== 'function') throw new Error('no factory');`,
    );
    assert.ok(seen.some((u) => u.endsWith('/src/cloud/azure/index.ts')));
    assert.ok(seen.some((u) => u.includes('/node_modules/@azure/arm-network/')));
    // @azure/identity (and MSAL) load when the factory builds a credential, not before.
    assert.deepEqual(
      seen.filter(
        (u) =>
          /\/src\/cloud\/(aws|hcloud|linux)\//.test(u) ||
          u.includes('/node_modules/@aws-sdk/') ||
          u.includes('/node_modules/@azure/identity/') ||
          u.includes('/node_modules/@azure/msal-'),
      ),
      [],
    );
  });

  it('resolving "gce" loads the GCE plug-in and no SDK: google-auth-library waits for the first token', () => {
    const seen = loadedModules(
      'src/index.ts',
      `lib.registerBuiltinProviders();
       const f = await lib.resolveCloudProvider('gce');
       if (typeof f !== 'function') throw new Error('no factory');`,
    );
    assert.ok(seen.some((u) => u.endsWith('/src/cloud/gce/index.ts')));
    assert.deepEqual(
      seen.filter((u) => SDK.test(u) || /\/src\/cloud\/(aws|azure|hcloud|linux)\//.test(u)),
      [],
    );
  });

  it('resolving "linux" loads no cloud SDK', () => {
    const seen = loadedModules(
      'src/index.ts',
      `lib.registerBuiltinProviders(); await lib.resolveCloudProvider('linux');`,
    );
    assert.ok(seen.some((u) => u.endsWith('/src/cloud/linux/index.ts')));
    assert.deepEqual(
      seen.filter((u) => SDK.test(u) || /\/src\/cloud\/(aws|azure|hcloud)\//.test(u)),
      [],
    );
  });

  it('resolving "openstack" loads its plug-in and no cloud SDK or other plug-in', () => {
    const seen = loadedModules(
      'src/index.ts',
      `lib.registerBuiltinProviders(); await lib.resolveCloudProvider('openstack');`,
    );
    assert.ok(seen.some((u) => u.endsWith('/src/cloud/openstack/index.ts')));
    assert.deepEqual(
      seen.filter((u) => SDK.test(u) || /\/src\/cloud\/(aws|azure|hcloud|linux)\//.test(u)),
      [],
    );
  });
});
