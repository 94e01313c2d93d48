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
import { azureFakeSkip, FIREWALL_ROUTE, startAzureFake } from '../support/azure-fake.ts';
import type { AzureFake, FakeRoute } from '../support/azure-fake.ts';
import { testenvBinaries } from '../support/controlplane.ts';
import {
  assertConfigsRefused,
  daemonArgs,
  DaemonRun,
  networkCondition,
  startClusterWithUser,
  type ClusterWithUser,
  deleteNodeRoute,
  untilRoutes,
} from '../support/daemon-run.ts';
import { internalIP } from './kube-helpers.ts';

const TABLE = 'k8s-routes';

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
  let cluster: ClusterWithUser | undefined;
  let fake: AzureFake;
  let dir = '';
  const savedHost = process.env['AZURE_POD_IDENTITY_AUTHORITY_HOST'];

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'routectl-azure-'));
    fake = await startAzureFake();
    // Inherited by the daemons (test/e2e/support.ts childEnv copies process.env).
    process.env['AZURE_POD_IDENTITY_AUTHORITY_HOST'] = fake.endpoint;
    if (!enabled) return;
    cluster = await startClusterWithUser();
  });

  after(async () => {
    if (savedHost === undefined) delete process.env['AZURE_POD_IDENTITY_AUTHORITY_HOST'];
    else process.env['AZURE_POD_IDENTITY_AUTHORITY_HOST'] = savedHost;
    await cluster?.cp.stop();
    await fake?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('bad azure.json: exit 1, one clear error line, no call to Azure or the identity endpoint', async () => {
    // The kubeconfig is never contacted: the run stops at the cloud config.
    await assertConfigsRefused(
      'azure',
      dir,
      [
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
      ],
      (stderr) => assert.doesNotMatch(stderr, /^\s+at /m, 'no stack trace'),
    );
    assert.deepEqual(await fake.requests(), [], 'no request reached the fake');
  });

  for (const watch of [false, true]) {
    const mode = watch ? 'watch' : 'periodic';
    describe(`${mode} mode`, () => {
      const run = new DaemonRun(() => cluster);
      const tableNames = async (): Promise<string[]> => names((await fake.table(TABLE))?.properties.routes);
      const until = (what: string, cond: (r: string[]) => boolean): Promise<void> =>
        untilRoutes(what, tableNames, cond);

      before(async () => {
        if (!enabled) return;
        await fake.reset();
        const config = path.join(dir, `${mode}.json`);
        fs.writeFileSync(config, azureJson(fake.endpoint));
        run.start(
          daemonArgs({ provider: 'azure', config, kubeconfig: cluster!.kubeconfig, watch }),
          path.join(dir, `${mode}.log`),
        );
      });

      after(async () => {
        await run.stop();
        if (!enabled) return;
        for (const n of ['node1', 'node10', 'ds', 'node3', 'node4'])
          await cluster?.admin.deleteNode(n).catch(() => {});
      });

      test('nodes → routes → NetworkUnavailable=False; the missing table is created; dual stack', async (t) => {
        await run.step(t, async ({ admin }) => {
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
          await until('four routes', (r) => r.join() === expected.join());
          for (const n of ['node1', 'node10', 'ds']) await networkCondition(admin, n);
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
        });
      });

      test("deleting node1 removes its route and leaves node10's", async (t) => {
        await run.step(t, async ({ admin }) => {
          await deleteNodeRoute(admin, 'node1', tableNames, 'node1=10.0.0.1', [
            'ds____102442024=10.0.0.2',
            'ds____fd0010244264=fd00::2',
            'node10=10.0.0.10',
          ]);
        });
      });

      test('another writer in the middle of a reconcile: 412, retried in place; its route stays', async (t) => {
        await run.step(t, async ({ admin }) => {
          await fake.inject({ method: 'PUT', table: TABLE, foreignRoute: FIREWALL_ROUTE });
          await admin.createNode('node3', ['10.244.3.0/24'], internalIP('10.0.0.3'));
          await until('node3 route', (r) => r.includes('node3=10.0.0.3'));
          await networkCondition(admin, 'node3');
          assert.ok((await tableNames()).includes('to_firewall=10.0.0.250'));
          const statuses = (await fake.requests()).filter((e) => e.method === 'PUT').map((e) => e.status);
          const at = statuses.indexOf(412);
          assert.ok(at >= 0 && statuses.slice(at + 1).includes(200), `PUT statuses ${statuses.join(',')}`);
        });
      });

      test('throttled: 429 with Retry-After, then the route', async (t) => {
        await run.step(t, async ({ admin }) => {
          await fake.inject({
            method: 'PUT',
            table: TABLE,
            status: 429,
            code: 'SubscriptionRequestsThrottled',
            message: 'Number of write requests for subscription exceeded the limit.',
            retryAfter: '1',
          });
          await admin.createNode('node4', ['10.244.4.0/24'], internalIP('10.0.0.4'));
          await until('node4 route', (r) => r.includes('node4=10.0.0.4'));
          await networkCondition(admin, 'node4');
          const puts = (await fake.requests()).filter((e) => e.method === 'PUT');
          assert.ok(
            puts.some((e) => e.status === 429),
            'the 429 was served',
          );
          assert.equal(await fake.pendingFaults(), 0);
        });
      });
    });
  }
});
