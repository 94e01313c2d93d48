// The aws plug-in as the packed library ships it: `npm run build` bundles its door to the AWS
// SDK (scripts/bundle-aws.ts), and `npm pack` + `npm install` put that bundle where a user's
// project, and the daemon, import it. Against moto_server (TESTENV.md §7):
//   - `cloud-route-controller/aws` routes through the bundle, credentials from the environment
//     (the SDK's own chain), and loads nothing of the SDK from node_modules;
//   - resolving `aws` through the main entry's registry (the daemon's path) loads the same bundle;
//   - the plug-in's unit tests and test/integration/aws.test.ts pass with src/cloud/aws/ec2.ts
//     resolved to the installed bundle (test/support/aws-bundle-hooks.ts).
// Run: scripts/moto.sh && npx node --test test/integration/aws-packed.test.ts
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { EC2Client } from '@aws-sdk/client-ec2';
import type * as AwsPlugin from '../../src/cloud/aws/index.ts';
import type { CallOptions, NodeLister, Route } from '../../src/core/types.ts';
import { createFixture, nodesFor, tableRoutes } from '../support/ec2-fixture.ts';
import { motoSkip, startMoto } from '../support/moto.ts';
import type { Moto } from '../support/moto.ts';
import { buildPackInstall } from '../support/packed-install.ts';
import type { PackedInstall } from '../support/packed-install.ts';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..', '..');
const CLUSTER = 'packed-cluster';
// moto is not reset between tests: each test tags its own route table.
const OWN_CLIENT_CLUSTER = 'packed-own-client';
const CREDENTIALS = { accessKeyId: 'testing', secretAccessKey: 'testing' };

// What the child process prints: the routes it saw, the typed error, and every module it loaded.
interface ChildReport {
  created: string[];
  afterDelete: string[];
  ghostError: { kind: string; message: string };
  registryFactory: boolean;
  loaded: string[];
}

// Runs in the install directory, so `cloud-route-controller/aws` resolves as in a user's project.
const CHILD = `
import { registerHooks } from 'node:module';
const loaded = [];
registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
const { awsProviderFactory } = await import('cloud-route-controller/aws');
const lib = await import('cloud-route-controller');
const input = JSON.parse(process.env.PACKED_INPUT);
const nodes = input.nodes;
const lister = { get: (n) => nodes.find((x) => x.metadata.name === n), list: () => nodes };
const opts = () => ({ signal: new AbortController().signal, reconcile: { id: 'r', scratch: new Map() } });
const want = (node, cidr) => ({ name: '', targetNode: node, targetNodeAddresses: [], enableNodeAddresses: false, destinationCIDR: cidr, blackhole: false });
const show = (routes) => routes.map((r) => r.destinationCIDR + '>' + r.targetNode).sort();
const routes = (await awsProviderFactory(input.config, lister)).routes();
for (const n of nodes) await routes.createRoute(input.cluster, n.metadata.uid, want(n.metadata.name, n.spec.podCIDRs[0]), opts());
const listed = await routes.listRoutes(input.cluster, opts());
const created = show(listed);
await routes.deleteRoute(input.cluster, listed.find((r) => r.targetNode === nodes[0].metadata.name), opts());
const afterDelete = show(await routes.listRoutes(input.cluster, opts()));
nodes.push({ metadata: { name: 'ghost', uid: 'uid-ghost' }, spec: { providerID: 'aws:///us-east-1a/i-00000000000000000' } });
const ghostError = await routes.createRoute(input.cluster, 'uid-ghost', want('ghost', '10.244.9.0/24'), opts()).then(
  () => ({ kind: 'none', message: '' }),
  (e) => ({ kind: lib.errorKind(e), message: String(e.message) }),
);
lib.registerBuiltinProviders();
const registryFactory = (await lib.resolveCloudProvider('aws')) === awsProviderFactory;
process.stdout.write(JSON.stringify({ created, afterDelete, ghostError, registryFactory, loaded }));
`;

/** The environment without the marker that makes a nested `node --test` report to this runner. */
function withoutTestContext(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const copy = { ...env };
  delete copy.NODE_TEST_CONTEXT;
  return copy;
}

describe('the packed aws plug-in (its bundled SDK) against moto', motoSkip(), () => {
  let moto: Moto;
  let ec2: EC2Client;
  let install: PackedInstall;

  before(() => {
    install = buildPackInstall('crc-aws-packed-');
  });
  before(async () => {
    moto = await startMoto();
    ec2 = new EC2Client({
      endpoint: moto.endpoint,
      region: 'us-east-1',
      credentials: CREDENTIALS,
      maxAttempts: 1,
    });
  });
  after(async () => {
    ec2?.destroy();
    await moto?.stop();
    install?.remove();
  });

  test('the package ships the bundle: no import of the SDK is left in dist/', () => {
    const awsDir = path.join(install.packageDir, 'dist', 'cloud', 'aws');
    const files = fs
      .readdirSync(awsDir, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.js'));
    assert.ok(files.includes('ec2.js'));
    const bare = files.filter((f) =>
      /\bfrom\s*['"]@(aws-sdk|smithy)\/|import\(\s*['"]@(aws-sdk|smithy)\//.test(
        fs.readFileSync(path.join(awsDir, f), 'utf8'),
      ),
    );
    assert.deepEqual(bare, []);
    const bundled = JSON.parse(fs.readFileSync(path.join(awsDir, 'ec2-bundled-packages.json'), 'utf8')) as {
      name: string;
    }[];
    assert.ok(bundled.some((p) => p.name === '@aws-sdk/client-ec2'));
    assert.ok(
      bundled.some((p) => p.name === '@aws-sdk/credential-provider-node'),
      'the credential chain is bundled',
    );
  });

  test('cloud-route-controller/aws routes through the bundle, credentials from the environment', async () => {
    const f = await createFixture(ec2, CLUSTER, 3);
    const nodes = nodesFor(f);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      AWS_EC2_METADATA_DISABLED: 'true',
      PACKED_INPUT: JSON.stringify({
        cluster: CLUSTER,
        config: `region: us-east-1\nendpoint: ${moto.endpoint}\n`,
        nodes,
      }),
    };
    for (const k of ['AWS_PROFILE', 'AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_SESSION_TOKEN', 'NODE_OPTIONS'])
      delete env[k];
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', CHILD], {
      cwd: install.dir,
      env,
      maxBuffer: 64 * 1024 * 1024,
    });
    const report = JSON.parse(stdout) as ChildReport;

    assert.deepEqual(report.created, [
      '10.244.0.0/24>node-0',
      '10.244.1.0/24>node-1',
      '10.244.2.0/24>node-2',
    ]);
    assert.deepEqual(report.afterDelete, ['10.244.1.0/24>node-1', '10.244.2.0/24>node-2']);
    assert.deepEqual(
      (await tableRoutes(ec2, f.tableId))
        .map((r) => r.DestinationCidrBlock ?? '')
        .filter((d) => d.startsWith('10.244.'))
        .sort(),
      ['10.244.1.0/24', '10.244.2.0/24'],
      'moto holds what the plug-in listed',
    );
    // An EC2 error code through the bundled deserializer still maps onto the typed errors.
    assert.equal(report.ghostError.kind, 'permanent');
    assert.match(report.ghostError.message, /InvalidInstanceID\.NotFound/);
    assert.equal(report.registryFactory, true, 'the registry (the daemon) resolves the same plug-in');

    const ours = report.loaded.filter((u) =>
      u.includes('/node_modules/cloud-route-controller/dist/cloud/aws/'),
    );
    assert.ok(
      ours.some((u) => u.endsWith('/dist/cloud/aws/ec2.js')),
      'the bundle is loaded',
    );
    assert.deepEqual(
      report.loaded.filter((u) => /\/node_modules\/@(aws-sdk|smithy)\//.test(u)),
      [],
      'nothing of the SDK loads from node_modules',
    );
  });

  test("the package's AwsRoutes also drives a client of the SDK itself (a library user's own)", async () => {
    const f = await createFixture(ec2, OWN_CLIENT_CLUSTER, 2);
    const nodes = nodesFor(f);
    const lister: NodeLister = { get: (n) => nodes.find((x) => x.metadata?.name === n), list: () => nodes };
    const entry = pathToFileURL(path.join(install.packageDir, 'dist', 'cloud', 'aws', 'index.js')).href;
    const { AwsRoutes } = (await import(entry)) as typeof AwsPlugin;
    const routes = new AwsRoutes(ec2, {}, lister);
    const opts = (): CallOptions => ({
      signal: new AbortController().signal,
      reconcile: { id: 'r', scratch: new Map() },
    });
    const want = (node: string): Route => ({
      name: '',
      targetNode: node,
      targetNodeAddresses: [],
      enableNodeAddresses: false,
      destinationCIDR: '10.244.0.0/24',
      blackhole: false,
    });
    await routes.createRoute(OWN_CLIENT_CLUSTER, 'uid-node-0', want('node-0'), opts());
    // The destination taken by node-0: RouteAlreadyExists, read back through the SDK's own
    // deserializer, then ReplaceRoute.
    await routes.createRoute(OWN_CLIENT_CLUSTER, 'uid-node-1', want('node-1'), opts());
    assert.deepEqual(
      (await routes.listRoutes(OWN_CLIENT_CLUSTER, opts())).map(
        (r) => `${r.destinationCIDR}>${r.targetNode}`,
      ),
      ['10.244.0.0/24>node-1'],
    );
  });

  test("the plug-in's unit tests and aws.test.ts pass against the installed bundle", async (t) => {
    const log = path.join(install.dir, 'hooks.log');
    const files = [
      ...fs
        .readdirSync(path.join(root, 'src', 'cloud', 'aws'))
        .filter((f) => f.endsWith('.test.ts'))
        .map((f) => path.join('src', 'cloud', 'aws', f)),
      path.join('test', 'integration', 'aws.test.ts'),
    ];
    const result = await run(
      process.execPath,
      ['--import', './test/support/aws-bundle-hooks.ts', '--test', '--test-reporter=tap', ...files],
      {
        cwd: root,
        env: {
          ...withoutTestContext(process.env),
          AWS_EC2_BUNDLE: path.join(install.packageDir, 'dist', 'cloud', 'aws', 'ec2.js'),
          AWS_EC2_BUNDLE_LOG: log,
        },
        maxBuffer: 64 * 1024 * 1024,
      },
    ).catch((e: { stdout?: string; stderr?: string; code?: number }) => {
      assert.fail(
        `node --test against the bundle failed (exit ${e.code}):\n${e.stdout ?? ''}\n${e.stderr ?? ''}`,
      );
    });
    const count = (name: string): number =>
      Number(new RegExp(`^# ${name} (\\d+)$`, 'm').exec(result.stdout)?.[1]);
    assert.equal(count('fail'), 0);
    assert.ok(count('pass') >= 60, `${count('pass')} tests passed`);
    t.diagnostic(`${count('pass')} tests passed against the bundle`);
    // Every test file's process that imports the door (config and targets tests do not) had it
    // resolved to the bundle.
    const redirected = fs
      .readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' '))
      .filter(([file]) => file !== undefined && files.some((f) => file.endsWith(f)));
    for (const f of files.filter((f) => /(routes|errors|index)\.test\.ts$|aws\.test\.ts$/.test(f))) {
      assert.ok(
        redirected.some(([file, n]) => file!.endsWith(f) && Number(n) > 0),
        `${f} ran against the bundle`,
      );
    }
  });
});
