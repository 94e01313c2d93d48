// `cloud-route-controller run --cloud-provider=azure --cloud-config=azure.json`
// (the real executable) on a real kube-apiserver against the Azure fake, in
// periodic and in watch mode, as a normal user bound to deploy/base/rbac.yaml.
// The daemon authenticates as a managed identity: @azure/identity asks the
// fake's instance-metadata endpoint (AZURE_POD_IDENTITY_AUTHORITY_HOST) for the
// token, exactly as on a VM. Run: scripts/azure-fake.sh build && npm run
// testenv:build && npx node --test test/integration/azure-daemon.test.ts
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Daemon, runToExit } from '../e2e/support.ts';
import { azureFakeSkip, startAzureFake } from '../support/azure-fake.ts';
import type { AzureFake, FakeRoute } from '../support/azure-fake.ts';
import { requireTestenv, startControlPlane, testenvBinaries } from '../support/controlplane.ts';
import type { ControlPlane } from '../support/controlplane.ts';
import { Admin, internalIP, setupControllerUser, waitFor } from './kube-helpers.ts';

const TABLE = 'k8s-routes';
const WATCH = '--feature-gates=CloudControllerManagerWatchBasedRoutesReconciliation=true';

/** An azure.json as cloud-provider-azure reads it, pointed at the fake. */
function azureJson(endpoint: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify(
    {
      cloud: 'AzurePublicCloud',
      tenantId: '00000000-0000-0000-0000-0000000000b2',
      subscriptionId: '00000000-0000-0000-0000-0000000000a1',
      resourceGroup: 'k8s-rg',
      location: 'westeurope',
      vnetName: 'k8s-vnet',
      subnetName: 'k8s-subnet',
      securityGroupName: 'k8s-nsg',
      routeTableName: TABLE,
      vmType: 'vmss',
      loadBalancerSku: 'standard',
      useManagedIdentityExtension: true,
      useInstanceMetadata: true,
      resourceManagerEndpoint: endpoint,
      ...extra,
    },
    null,
    2,
  );
}

function names(routes: FakeRoute[] | undefined): string[] {
  return (routes ?? []).map((r) => `${r.name}=${r.properties.nextHopIpAddress ?? ''}`).sort();
}

const enabled = testenvBinaries() !== undefined;

describe('the azure executable on a real apiserver', { ...azureFakeSkip(), timeout: 300_000 }, () => {
  let cp: ControlPlane | undefined;
  let admin: Admin;
  let kubeconfig = '';
  let fake: AzureFake;
  let dir = '';
  const savedHost = process.env['AZURE_POD_IDENTITY_AUTHORITY_HOST'];

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'routectl-azure-'));
    fake = await startAzureFake();
    // Inherited by the daemons (test/e2e/support.ts childEnv copies process.env).
    process.env['AZURE_POD_IDENTITY_AUTHORITY_HOST'] = fake.endpoint;
    if (!enabled) return;
    cp = await startControlPlane();
    admin = new Admin(cp.adminKubeconfig);
    kubeconfig = await setupControllerUser(cp);
  });

  after(async () => {
    if (savedHost === undefined) delete process.env['AZURE_POD_IDENTITY_AUTHORITY_HOST'];
    else process.env['AZURE_POD_IDENTITY_AUTHORITY_HOST'] = savedHost;
    await cp?.stop();
    await fake?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('bad azure.json: exit 1, one clear error line, no call to Azure or the identity endpoint', async () => {
    // Never contacted: the run stops at the cloud config.
    const unreachable = path.join(dir, 'unreachable.kubeconfig');
    fs.writeFileSync(
      unreachable,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1' } }],
        users: [{ name: 'u', user: { token: 'never-used' } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'x',
      }),
    );
    for (const [file, text, message] of [
      [
        'no-table.json',
        azureJson(fake.endpoint, { routeTableName: undefined }),
        /^error: cloud provider could not be initialized: azure cloud config: "routeTableName" is required \(the route table of the cluster's subnet\)$/,
      ],
      [
        'bad-sub.json',
        azureJson(fake.endpoint, { subscriptionId: 'my-subscription' }),
        /^error: cloud provider could not be initialized: azure cloud config: "subscriptionId" is not valid: "my-subscription" \(expected a subscription ID \(GUID\)\)$/,
      ],
      [
        'no-credential.json',
        azureJson(fake.endpoint, { useManagedIdentityExtension: false }),
        /^error: cloud provider could not be initialized: azure cloud config: no credentials: set "useFederatedWorkloadIdentityExtension"/,
      ],
    ] as const) {
      const config = path.join(dir, file);
      fs.writeFileSync(config, text);
      const r = await runToExit([
        'run',
        '--cloud-provider=azure',
        `--cloud-config=${config}`,
        `--kubeconfig=${unreachable}`,
        '--cluster-cidr=10.244.0.0/16',
      ]);
      assert.equal(r.code, 1, r.stderr);
      const lines = r.stderr.split('\n').filter((l) => l !== '');
      assert.equal(lines.length, 1, r.stderr);
      assert.match(lines[0]!, message);
      assert.doesNotMatch(r.stderr, /^\s+at /m, 'no stack trace');
    }
    assert.deepEqual(await fake.requests(), [], 'no request reached the fake');
  });

  for (const watch of [false, true]) {
    const mode = watch ? 'watch' : 'periodic';
    describe(`${mode} mode`, () => {
      let daemon: Daemon | undefined;
      const guard = (t: { skip(m?: string): void }): boolean =>
        enabled && cp !== undefined ? true : !requireTestenv(t as Parameters<typeof requireTestenv>[0]);
      const failed = (err: unknown): never => {
        cp?.markFailed(String(err));
        if (daemon) console.log(daemon.tail(60));
        throw err;
      };
      const condition = (n: string): Promise<void> =>
        waitFor(`${n} NetworkUnavailable=False/RouteCreated`, 30_000, async () => {
          const c = await admin.condition(n);
          return c?.status === 'False' && c.reason === 'RouteCreated';
        });
      const tableNames = async (): Promise<string[]> => names((await fake.table(TABLE))?.properties.routes);

      before(async () => {
        if (!enabled) return;
        await fake.reset();
        const config = path.join(dir, `${mode}.json`);
        fs.writeFileSync(config, azureJson(fake.endpoint));
        daemon = Daemon.start(
          [
            'run',
            '--cloud-provider=azure',
            `--cloud-config=${config}`,
            `--kubeconfig=${kubeconfig}`,
            '--cluster-cidr=10.244.0.0/16,fd00:10:244::/56',
            '--leader-elect=false',
            '--metrics-bind-address=127.0.0.1:0',
            '--health-probe-bind-address=127.0.0.1:0',
            '--log-format=json',
            ...(watch ? [WATCH] : ['--route-reconciliation-period=2s']),
          ],
          path.join(dir, `${mode}.log`),
        );
      });

      after(async () => {
        daemon?.signal('SIGTERM');
        if (daemon) assert.equal((await daemon.waitExit(30_000)).code, 0, daemon.tail());
        if (!enabled) return;
        for (const n of ['node1', 'node10', 'ds', 'node3', 'node4'])
          await admin.deleteNode(n).catch(() => {});
      });

      test('nodes → routes → NetworkUnavailable=False; the missing table is created; dual stack', async (t) => {
        if (!guard(t)) return;
        try {
          await admin.createNode('node1', ['10.244.1.0/24'], internalIP('10.0.0.1'));
          await admin.createNode('node10', ['10.244.10.0/24'], internalIP('10.0.0.10'));
          await admin.createNode(
            'ds',
            ['10.244.2.0/24', 'fd00:10:244:2::/64'],
            [...internalIP('10.0.0.2'), ...internalIP('fd00::2')],
          );
          const expected = [
            'ds____102442024=10.0.0.2',
            'ds____fd0010244264=fd00::2',
            'node10=10.0.0.10',
            'node1=10.0.0.1',
          ];
          await waitFor(
            'four routes',
            60_000,
            async () => (await tableNames()).join() === expected.join(),
            200,
          );
          for (const n of ['node1', 'node10', 'ds']) await condition(n);
          const table = await fake.table(TABLE);
          assert.equal(table?.location, 'westeurope');
          const log = await fake.requests();
          const puts = log.filter((e) => e.method === 'PUT');
          assert.equal(puts[0]?.status, 201, 'the first write created the table');
          assert.equal(puts[0]?.ifMatch, undefined);
          assert.ok(
            log.some((e) => e.api === 'imds' && e.status === 200),
            'a managed identity token',
          );
          assert.ok(
            log.filter((e) => e.api !== 'imds').every((e) => e.token?.startsWith('imds-token-')),
            'every ARM call carries the token the identity endpoint issued',
          );
        } catch (err) {
          failed(err);
        }
      });

      test("deleting node1 removes its route and leaves node10's", async (t) => {
        if (!guard(t)) return;
        try {
          await admin.deleteNode('node1');
          await waitFor(
            'node1 route gone',
            60_000,
            async () => !(await tableNames()).includes('node1=10.0.0.1'),
            200,
          );
          assert.deepEqual(await tableNames(), [
            'ds____102442024=10.0.0.2',
            'ds____fd0010244264=fd00::2',
            'node10=10.0.0.10',
          ]);
        } catch (err) {
          failed(err);
        }
      });

      test('another writer in the middle of a reconcile: 412, retried in place; its route stays', async (t) => {
        if (!guard(t)) return;
        try {
          const foreign = {
            name: 'to_firewall',
            properties: {
              addressPrefix: '0.0.0.0/0',
              nextHopType: 'VirtualAppliance',
              nextHopIpAddress: '10.0.0.250',
            },
          };
          await fake.inject({ method: 'PUT', table: TABLE, foreignRoute: foreign });
          await admin.createNode('node3', ['10.244.3.0/24'], internalIP('10.0.0.3'));
          await waitFor(
            'node3 route',
            60_000,
            async () => (await tableNames()).includes('node3=10.0.0.3'),
            200,
          );
          await condition('node3');
          assert.ok((await tableNames()).includes('to_firewall=10.0.0.250'));
          const statuses = (await fake.requests()).filter((e) => e.method === 'PUT').map((e) => e.status);
          const at = statuses.indexOf(412);
          assert.ok(at >= 0 && statuses.slice(at + 1).includes(200), `PUT statuses ${statuses.join(',')}`);
        } catch (err) {
          failed(err);
        }
      });

      test('throttled: 429 with Retry-After, then the route', async (t) => {
        if (!guard(t)) return;
        try {
          await fake.inject({
            method: 'PUT',
            table: TABLE,
            status: 429,
            code: 'SubscriptionRequestsThrottled',
            message: 'Number of write requests for subscription exceeded the limit.',
            retryAfter: '1',
          });
          await admin.createNode('node4', ['10.244.4.0/24'], internalIP('10.0.0.4'));
          await waitFor(
            'node4 route',
            60_000,
            async () => (await tableNames()).includes('node4=10.0.0.4'),
            200,
          );
          await condition('node4');
          const puts = (await fake.requests()).filter((e) => e.method === 'PUT');
          assert.ok(
            puts.some((e) => e.status === 429),
            'the 429 was served',
          );
          assert.equal(await fake.pendingFaults(), 0);
        } catch (err) {
          failed(err);
        }
      });
    });
  }
});
