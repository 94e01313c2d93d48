// `cloud-route-controller run --cloud-provider=gce --cloud-config=gce.conf`
// (the real executable) on a real kube-apiserver against the GCE fake
// (Google's MockGCE as the Compute Engine API), in periodic and in watch mode,
// as a normal user bound to deploy/base/rbac.yaml. In periodic mode the daemon
// authenticates with Application Default Credentials, which find the fake's
// metadata server (GCE_METADATA_HOST) exactly as on an instance; in watch mode
// with a service-account key file (GOOGLE_APPLICATION_CREDENTIALS) whose
// token_uri is the fake's verifying token endpoint, and the fake refuses any
// bearer it did not issue. Run: scripts/gce-fake.sh build
// && npm run testenv:build && node --test test/integration/gce-daemon.test.ts
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gceFakeSkip, startGceFake } from '../support/gce-fake.ts';
import type { FakeRoute, GceFake } from '../support/gce-fake.ts';
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
import { internalIP, waitFor } from './kube-helpers.ts';

const PROJECT = 'k8s-project';
const ZONE = 'europe-west1-b';
const NETWORK = 'k8s-net';
const NET_URL = `https://www.googleapis.com/compute/v1/projects/${PROJECT}/global/networks/${NETWORK}`;
// Another cluster's route in the same network, inside our cluster CIDR, to one of our instances.
const FOREIGN: FakeRoute = {
  name: 'other-cluster-5f0c',
  destRange: '10.244.200.0/24',
  network: NET_URL,
  nextHopInstance: `projects/${PROJECT}/zones/${ZONE}/instances/node1`,
  priority: 1000,
  description: 'k8s-node-route',
};

/** gce.conf as kube-up and cloud-provider-gcp write it, pointed at the fake. */
function gceConf(api: string, extra = ''): string {
  return [
    '[global]',
    `project-id = ${PROJECT}`,
    `network-name = ${NETWORK}`,
    'subnetwork-name = k8s-subnet',
    'node-tags = k8s-node',
    'node-instance-prefix = k8s-node',
    'multizone = true',
    `local-zone = ${ZONE}`,
    `api-endpoint = ${api}`,
    extra,
  ].join('\n');
}

const SERVICE_ACCOUNT = `k8s-routes@${PROJECT}.iam.gserviceaccount.com`;

/** A service-account key file whose token_uri is the fake's, its public half registered there. */
async function serviceAccountKey(fake: GceFake, dir: string): Promise<string> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  await fake.addServiceAccounts({
    email: SERVICE_ACCOUNT,
    publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  });
  const file = path.join(dir, 'key.json');
  fs.writeFileSync(
    file,
    JSON.stringify({
      type: 'service_account',
      project_id: PROJECT,
      private_key_id: 'k1',
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      client_email: SERVICE_ACCOUNT,
      token_uri: `${fake.endpoint}/token`,
    }),
    { mode: 0o600 },
  );
  return file;
}

const providerID = (name: string): string => `gce://${PROJECT}/${ZONE}/${name}`;
const enabled = testenvBinaries() !== undefined;

describe('the gce executable on a real apiserver', { ...gceFakeSkip(), timeout: 300_000 }, () => {
  let cluster: ClusterWithUser | undefined;
  let fake: GceFake;
  let dir = '';
  const envKeys = ['GCE_METADATA_HOST', 'CLOUDSDK_CONFIG', 'GOOGLE_APPLICATION_CREDENTIALS'] as const;
  const savedEnv = envKeys.map((k) => process.env[k]);

  const summary = async (): Promise<string[]> =>
    (await fake.routes()).map((r) => `${r.destRange}>${r.nextHopInstance?.split('/').pop() ?? ''}`).sort();

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'routectl-gce-'));
    fake = await startGceFake();
    // Inherited by the daemons (test/e2e/support.ts childEnv copies process.env): ADC
    // finds no key file and no gcloud login, and asks the fake's metadata server.
    process.env['GCE_METADATA_HOST'] = fake.endpoint.replace('http://', '');
    process.env['CLOUDSDK_CONFIG'] = path.join(dir, 'gcloud');
    delete process.env['GOOGLE_APPLICATION_CREDENTIALS'];
    if (!enabled) return;
    cluster = await startClusterWithUser();
  });

  after(async () => {
    envKeys.forEach((k, i) => {
      if (savedEnv[i] === undefined) delete process.env[k];
      else process.env[k] = savedEnv[i];
    });
    await cluster?.cp.stop();
    await fake?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('bad gce.conf: exit 1, one clear error line, no call to the API; metadata only for keys it lacks', async () => {
    await fake.reset();
    await assertConfigsRefused(
      'gce',
      dir,
      [
        [
          'no-network.conf',
          `[global]\nproject-id = ${PROJECT}\napi-endpoint = ${fake.api}\n`,
          /^error: cloud provider could not be initialized: gce cloud config: "network-name" is required in \[global\] \(the VPC network the routes belong to\)$/,
        ],
        [
          'bad-project.conf',
          gceConf(fake.api).replace(`project-id = ${PROJECT}`, 'project-id = My_Project'),
          /^error: cloud provider could not be initialized: gce cloud config: "project-id" is not valid: "My_Project" \(expected a project ID or project number\)$/,
        ],
        [
          'plain-http.conf',
          gceConf('http://compute.example.com/compute/v1/'),
          /^error: cloud provider could not be initialized: gce cloud config: "api-endpoint" must be an https URL \(http only on loopback\)/,
        ],
      ],
      (stderr) => assert.doesNotMatch(stderr, /^\s+at /m, 'no stack trace'),
    );
    const requests = await fake.requests();
    assert.deepEqual(
      requests.filter((r) => r.api !== 'metadata'),
      [],
      'no request reached the Compute API',
    );
    // R122: as upstream, the metadata server is asked for what gce.conf lacks (the first file's
    // network-name and local-zone), never for what it has (the other two carry local-zone).
    assert.deepEqual(requests.map((r) => r.path).sort(), [
      '/computeMetadata/v1/instance/network-interfaces/0/network',
      '/computeMetadata/v1/instance/zone',
    ]);
  });

  for (const watch of [false, true]) {
    const mode = watch ? 'watch' : 'periodic';
    describe(`${mode} mode`, () => {
      const run = new DaemonRun(() => cluster);
      const until = (what: string, cond: (r: string[]) => boolean): Promise<void> =>
        untilRoutes(what, summary, cond);

      before(async () => {
        if (!enabled) return;
        await fake.reset();
        await fake.addInstances(
          ...['node1', 'vm-node10', 'ds', 'byname', 'node4', 'quota'].map((name) => ({
            project: PROJECT,
            zone: ZONE,
            name,
          })),
        );
        await fake.insertRoute(PROJECT, FOREIGN);
        const config = path.join(dir, `${mode}.conf`);
        fs.writeFileSync(config, gceConf(fake.api));
        // Watch mode authenticates with a service-account key file (its token_uri the fake's,
        // which verifies the assertion), periodic mode with the metadata server (ADC).
        if (watch) {
          process.env['GOOGLE_APPLICATION_CREDENTIALS'] = await serviceAccountKey(fake, dir);
          await fake.configure({ requireIssuedTokens: true });
        }
        run.start(
          daemonArgs({
            provider: 'gce',
            config,
            kubeconfig: cluster!.kubeconfig,
            watch,
            extra: ['--cluster-name=kubernetes'],
          }),
          path.join(dir, `${mode}.log`),
        );
        delete process.env['GOOGLE_APPLICATION_CREDENTIALS'];
      });

      after(async () => {
        await run.stop();
        if (!enabled) return;
        for (const n of ['node1', 'node10', 'ds', 'byname', 'node4', 'quota'])
          await cluster?.admin.deleteNode(n).catch(() => {});
      });

      test("nodes → routes → NetworkUnavailable=False; dual stack; by providerID and by name; the other cluster's route untouched", async (t) => {
        await run.step(t, async ({ admin }) => {
          await admin.createNode('node1', ['10.244.1.0/24'], internalIP('10.0.0.1'), providerID('node1'));
          await admin.createNode(
            'node10',
            ['10.244.10.0/24'],
            internalIP('10.0.0.10'),
            providerID('vm-node10'),
          );
          await admin.createNode(
            'ds',
            ['10.244.2.0/24', 'fd00:10:244:2::/64'],
            [...internalIP('10.0.0.2'), ...internalIP('fd00::2')],
            providerID('ds'),
          );
          // No gce:// providerID: found by name in local-zone.
          await admin.createNode('byname', ['10.244.3.0/24'], internalIP('10.0.0.3'));
          const expected = [
            '10.244.1.0/24>node1',
            '10.244.10.0/24>vm-node10',
            '10.244.2.0/24>ds',
            '10.244.200.0/24>node1',
            '10.244.3.0/24>byname',
            'fd00:10:244:2::/64>ds',
          ];
          await until('five routes and the foreign one', (r) => r.join() === expected.join());
          for (const n of ['node1', 'node10', 'ds', 'byname']) await networkCondition(admin, n);
          const uid = (await admin.getNode('ds'))?.metadata?.uid ?? '';
          const names = (await fake.routes()).map((r) => r.name).sort();
          assert.ok(
            names.includes(`kubernetes-${uid}`) && names.includes(`kubernetes-${uid.replace(/-/g, '')}-v6`),
            names.join(),
          );
          const log = await fake.requests();
          const [tokenAPI, issued] = watch
            ? ['oauth2.token', /^sa-token-\d+$/]
            : ['metadata.token', /^metadata-token-\d+$/];
          assert.ok(
            log.some((e) => e.api === tokenAPI && e.status === 200),
            `a token from ${tokenAPI}`,
          );
          assert.ok(
            log.every((e) => e.api !== 'oauth2.token' || (e.status === 200 && e.issuer === SERVICE_ACCOUNT)),
            'every key-file assertion verified',
          );
          const compute = log.filter(
            (e) => /^(routes|instances|zones|globalOperations)\./.test(e.api) && e.token !== 'seed',
          );
          assert.ok(
            compute.length > 0 && compute.every((e) => issued.test(e.token ?? '') && e.status !== 401),
            `every Compute call carries the ${tokenAPI} token`,
          );
          assert.ok(
            log.every((e) => !(e.api === 'routes.delete')),
            'nothing deleted',
          );
        });
      });

      test("deleting node1 removes its route and leaves node10's and the other cluster's", async (t) => {
        await run.step(t, async ({ admin }) => {
          await deleteNodeRoute(admin, 'node1', summary, '10.244.1.0/24>node1', [
            '10.244.10.0/24>vm-node10',
            '10.244.2.0/24>ds',
            '10.244.200.0/24>node1',
            '10.244.3.0/24>byname',
            'fd00:10:244:2::/64>ds',
          ]);
        });
      });

      test('throttled: 403 rateLimitExceeded, then the route', async (t) => {
        await run.step(t, async ({ admin }) => {
          await fake.inject({
            api: 'routes.insert',
            status: 403,
            reason: 'rateLimitExceeded',
            message: "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute'",
          });
          await admin.createNode('node4', ['10.244.4.0/24'], internalIP('10.0.0.4'), providerID('node4'));
          await until('node4 route', (r) => r.includes('10.244.4.0/24>node4'));
          await networkCondition(admin, 'node4');
          const inserts = (await fake.requests()).filter((e) => e.api === 'routes.insert');
          assert.ok(
            inserts.some((e) => e.status === 403),
            'the 403 was served',
          );
          assert.equal(await fake.pendingFaults(), 0);
        });
      });

      test('route quota: the operation ends QUOTA_EXCEEDED → NetworkUnavailable=True/NoRouteCreated and an Event', async (t) => {
        await run.step(t, async ({ admin }) => {
          await fake.inject({
            api: 'routes.insert',
            times: 1000,
            opError: {
              code: 'QUOTA_EXCEEDED',
              message: "Quota 'ROUTES' exceeded.  Limit: 250.0 globally.",
              httpStatus: 403,
            },
          });
          await admin.createNode('quota', ['10.244.5.0/24'], internalIP('10.0.0.5'), providerID('quota'));
          await networkCondition(admin, 'quota', 'True', 'NoRouteCreated');
          await waitFor('FailedToCreateRoute event', 30_000, async () =>
            (await admin.events('involvedObject.name=quota')).some((e) =>
              JSON.stringify(e).includes("Quota 'ROUTES' exceeded"),
            ),
          );
          assert.ok(!(await summary()).includes('10.244.5.0/24>quota'));
          await fake.clearFaults();
        });
      });
    });
  }
});
