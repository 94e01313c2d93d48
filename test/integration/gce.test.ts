// The gce plug-in against Google's MockGCE (k8s-cloud-provider pkg/cloud,
// served as the Compute Engine v1 REST API by testenv/gce-fake): routes,
// names, paging, operations, errors and credentials, provider alone.
// Run: scripts/gce-fake.sh build && node --test test/integration/gce.test.ts
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { errorKind, retryAfterMs } from '../../src/core/errors.ts';
import type { Node } from '../../src/core/types.ts';
import {
  buildGceProvider,
  ComputeClient,
  GceRoutes,
  parseGceCloudConfig,
} from '../../src/cloud/gce/index.ts';
import type { TokenSource } from '../../src/cloud/gce/index.ts';
import { gceFakeSkip, startGceFake } from '../support/gce-fake.ts';
import type { FakeRoute, GceFake } from '../support/gce-fake.ts';
import { callOptions, nodeLister, wantRoute } from '../support/provider-calls.ts';

const PROJECT = 'k8s-project';
const ZONE = 'europe-west1-b';
const NETWORK = 'k8s-net';
const UID1 = '0b3a9c7e-1111-4d7e-9a57-0000000000a1';
const UID10 = '0b3a9c7e-1111-4d7e-9a57-0000000000a2';
const UIDDS = '0b3a9c7e-1111-4d7e-9a57-0000000000a3';
const STATIC: TokenSource = async () => 'static-test-token';

function node(name: string, uid: string, podCIDRs: string[], providerID?: string): Node {
  return {
    metadata: { name, uid },
    spec: { podCIDRs, ...(providerID !== undefined ? { providerID } : {}) },
    status: { addresses: [{ type: 'InternalIP', address: '10.0.0.1' }] },
  };
}

const NODES = [
  node('node1', UID1, ['10.244.1.0/24'], `gce://${PROJECT}/${ZONE}/node1`),
  // Its instance is not named like the node: only the providerID finds it.
  node('node10', UID10, ['10.244.10.0/24'], `gce://${PROJECT}/${ZONE}/vm-node10`),
  node('ds', UIDDS, ['10.244.2.0/24', 'fd00:10:244:2::/64'], `gce://${PROJECT}/${ZONE}/ds`),
  node('byname', '0b3a9c7e-1111-4d7e-9a57-0000000000a4', ['10.244.4.0/24']),
];
const INSTANCES = ['node1', 'vm-node10', 'ds', 'byname'].map((name) => ({
  project: PROJECT,
  zone: ZONE,
  name,
}));

/** name=dest>instance of every route in the fake, sorted. */
function summary(routes: FakeRoute[]): string[] {
  return routes
    .map((r) => `${r.name}=${r.destRange}>${(r.nextHopInstance ?? r.nextHopIp ?? '').split('/').pop()}`)
    .sort();
}

function gceConf(api: string, extra = ''): string {
  return `[global]\nproject-id = ${PROJECT}\nnetwork-name = ${NETWORK}\nnode-tags = k8s-node\napi-endpoint = ${api}\n${extra}`;
}

async function kindOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return errorKind(err);
  }
}

describe("gce provider against Google's MockGCE", { ...gceFakeSkip(), timeout: 120_000 }, () => {
  let fake: GceFake;
  let routes: GceRoutes;
  let localZone: string | undefined;

  const build = (nodes = NODES): GceRoutes => {
    const config = parseGceCloudConfig(gceConf(fake.api, localZone ? `local-zone = ${localZone}\n` : ''));
    return new GceRoutes(
      new ComputeClient({ apiEndpoint: config.apiEndpoint, token: STATIC }),
      config,
      nodeLister(nodes),
    );
  };

  before(async () => {
    fake = await startGceFake();
  });
  after(async () => {
    await fake?.stop();
  });
  beforeEach(async () => {
    await fake.reset();
    await fake.addInstances(...INSTANCES);
    localZone = undefined;
    routes = build();
  });

  test('create: upstream names, next hop from providerID, k8s-node-route, priority 1000, one wait per write', async () => {
    await fake.configure({ opPolls: 3, waitSteps: 1 });
    const created = await routes.createRoute(
      'kubernetes',
      UID10,
      wantRoute('node10', '10.244.10.0/24'),
      callOptions(),
    );
    assert.deepEqual(created, { ...wantRoute('node10', '10.244.10.0/24'), name: `kubernetes-${UID10}` });
    const [r] = await fake.routes();
    assert.equal(r?.name, `kubernetes-${UID10}`);
    assert.equal(r?.description, 'k8s-node-route');
    assert.equal(r?.priority, 1000);
    assert.match(r?.network ?? '', new RegExp(`/projects/${PROJECT}/global/networks/${NETWORK}$`));
    assert.match(
      r?.nextHopInstance ?? '',
      new RegExp(`/projects/${PROJECT}/zones/${ZONE}/instances/vm-node10$`),
    );
    const log = await fake.requests();
    // With one step per wait, the operation answers RUNNING 3 times, then DONE: 4 waits after the insert.
    assert.deepEqual(
      log.map((e) => `${e.method} ${e.api} ${e.status}`),
      [
        'POST routes.insert 200',
        'POST globalOperations.wait 200',
        'POST globalOperations.wait 200',
        'POST globalOperations.wait 200',
        'POST globalOperations.wait 200',
      ],
    );
    assert.ok(log.every((e) => e.token === 'static-test-token' && e.path.includes(`/projects/${PROJECT}/`)));
  });

  test('dual stack: the IPv6 route gets a name of its own; listRoutes maps both back to the node', async () => {
    await routes.createRoute('kubernetes', UIDDS, wantRoute('ds', '10.244.2.0/24'), callOptions());
    await routes.createRoute('kubernetes', UIDDS, wantRoute('ds', 'fd00:10:244:2::/64'), callOptions());
    const v6 = `kubernetes-${UIDDS.replace(/-/g, '')}-v6`;
    assert.deepEqual(
      summary(await fake.routes()),
      [`kubernetes-${UIDDS}=10.244.2.0/24>ds`, `${v6}=fd00:10:244:2::/64>ds`].sort(),
    );
    const listed = await routes.listRoutes('kubernetes', callOptions());
    assert.deepEqual(
      listed.map((r) => `${r.name} ${r.destinationCIDR} ${r.targetNode} ${r.blackhole}`).sort(),
      [`kubernetes-${UIDDS} 10.244.2.0/24 ds false`, `${v6} fd00:10:244:2::/64 ds false`].sort(),
    );
  });

  test("listRoutes: every page, and only this cluster's routes in this network with upstream's description", async () => {
    await fake.configure({ pageSize: 2 });
    for (const [n, uid, cidr] of [
      ['node1', UID1, '10.244.1.0/24'],
      ['node10', UID10, '10.244.10.0/24'],
      ['ds', UIDDS, '10.244.2.0/24'],
    ] as const)
      await routes.createRoute('kubernetes', uid, wantRoute(n, cidr), callOptions());
    const net = `https://www.googleapis.com/compute/v1/projects/${PROJECT}/global/networks/${NETWORK}`;
    const hop = `projects/${PROJECT}/zones/${ZONE}/instances/node1`;
    // Not ours: another cluster, a hand-made route, another network.
    await fake.insertRoute(PROJECT, {
      name: 'other-cluster-x',
      destRange: '10.244.7.0/24',
      network: net,
      nextHopInstance: hop,
      description: 'k8s-node-route',
    });
    await fake.insertRoute(PROJECT, {
      name: 'kubernetes-by-hand',
      destRange: '10.244.8.0/24',
      network: net,
      nextHopInstance: hop,
      description: 'to the VPN',
    });
    await fake.insertRoute(PROJECT, {
      name: 'kubernetes-elsewhere',
      destRange: '10.244.9.0/24',
      network: net.replace(NETWORK, 'other-net'),
      nextHopInstance: hop,
      description: 'k8s-node-route',
    });
    await fake.insertRoute(PROJECT, {
      name: 'kubernetes-to-gw',
      destRange: '10.244.6.0/24',
      network: net,
      nextHopIp: '10.0.0.9',
      description: 'k8s-node-route',
    });
    const listed = await routes.listRoutes('kubernetes', callOptions());
    assert.deepEqual(listed.map((r) => `${r.destinationCIDR}>${r.targetNode}`).sort(), [
      '10.244.1.0/24>node1',
      '10.244.10.0/24>node10',
      '10.244.2.0/24>ds',
    ]);
    const lists = (await fake.requests()).filter((e) => e.api === 'routes.list');
    assert.equal(lists.length, 2, 'the matching routes take two pages of two');
    assert.deepEqual(
      lists.map((e) => e.pageToken ?? ''),
      ['', 'page-2'],
    );
    assert.equal(
      lists[0]?.filter,
      `(name eq kubernetes-.*) (network eq .*/projects/${PROJECT}/global/networks/${NETWORK}) (description eq k8s-node-route)`,
    );
  });

  test('idempotence: a 409 for the same route is success, for another route a conflict; a 404 on delete is success', async () => {
    const o = callOptions();
    await routes.createRoute('kubernetes', UID1, wantRoute('node1', '10.244.1.0/24'), o);
    assert.equal(
      await kindOf(routes.createRoute('kubernetes', UID1, wantRoute('node1', '10.244.1.0/24'), o)),
      'ok',
    );
    // Same name (hint), other destination: never success (R2).
    const other = routes.createRoute('kubernetes', UID1, wantRoute('node1', '10.244.99.0/24'), o);
    await assert.rejects(
      other,
      (err: Error) =>
        errorKind(err) === 'conflict' && /already exists for 10\.244\.1\.0\/24/.test(err.message),
    );
    const [listed] = await routes.listRoutes('kubernetes', o);
    await routes.deleteRoute('kubernetes', listed!, o);
    assert.deepEqual(await fake.routes(), []);
    assert.equal(await kindOf(routes.deleteRoute('kubernetes', listed!, o)), 'ok');
    const statuses = (await fake.requests())
      .filter((e) => e.api.startsWith('routes.'))
      .map((e) => `${e.api} ${e.status}`);
    assert.deepEqual(statuses, [
      'routes.insert 200',
      'routes.insert 409',
      'routes.get 200',
      'routes.insert 409',
      'routes.get 200',
      'routes.list 200',
      'routes.delete 200',
      'routes.delete 404',
    ]);
  });

  test('a route whose instance is gone is a blackhole; a node without providerID is found by name in local-zone', async () => {
    localZone = ZONE;
    routes = build();
    await routes.createRoute('kubernetes', UID1, wantRoute('node1', '10.244.1.0/24'), callOptions());
    await routes.createRoute(
      'kubernetes',
      'hint-byname',
      wantRoute('byname', '10.244.4.0/24'),
      callOptions(),
    );
    const get = (await fake.requests()).filter((e) => e.api === 'instances.get');
    assert.deepEqual(
      get.map((e) => e.path),
      [`/compute/v1/projects/${PROJECT}/zones/${ZONE}/instances/byname`],
    );
    await fake.deleteInstances({ project: PROJECT, zone: ZONE, name: 'node1' });
    const listed = await routes.listRoutes('kubernetes', callOptions());
    assert.deepEqual(listed.map((r) => `${r.targetNode} ${r.blackhole}`).sort(), [
      'byname false',
      'node1 true',
    ]);
    // Without local-zone, a node without providerID is a clear permanent error and no write.
    localZone = undefined;
    routes = build();
    const before = (await fake.requests()).length;
    await assert.rejects(
      routes.createRoute('kubernetes', 'h2', wantRoute('byname', '10.244.5.0/24'), callOptions()),
      (err: Error) =>
        errorKind(err) === 'permanent' &&
        /no gce:\/\/ providerID, and gce.conf sets no local-zone/.test(err.message),
    );
    assert.equal((await fake.requests()).length, before);
  });

  test('throttling: 403 rateLimitExceeded and 429 with Retry-After; quota: QUOTA_EXCEEDED and quotaExceeded', async () => {
    const create = (cidr: string) =>
      routes.createRoute('kubernetes', 'h', wantRoute('node1', cidr), callOptions());
    await fake.inject({
      api: 'routes.insert',
      status: 403,
      reason: 'rateLimitExceeded',
      message:
        "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute' of service 'compute.googleapis.com'",
    });
    await assert.rejects(
      create('10.244.1.0/24'),
      (err: Error) => errorKind(err) === 'throttled' && retryAfterMs(err) === undefined,
    );
    await fake.inject({
      api: 'routes.insert',
      status: 429,
      reason: 'rateLimitExceeded',
      message: 'Rate Limit Exceeded',
      retryAfter: '7',
    });
    await assert.rejects(
      create('10.244.1.0/24'),
      (err: Error) => errorKind(err) === 'throttled' && retryAfterMs(err) === 7000,
    );
    await fake.inject({
      api: 'routes.insert',
      opError: {
        code: 'QUOTA_EXCEEDED',
        message: "Quota 'ROUTES' exceeded.  Limit: 250.0 globally.",
        httpStatus: 403,
      },
    });
    await assert.rejects(
      create('10.244.1.0/24'),
      (err: Error) => errorKind(err) === 'quota_exceeded' && /Quota 'ROUTES' exceeded/.test(err.message),
    );
    await fake.inject({
      api: 'routes.insert',
      status: 403,
      reason: 'quotaExceeded',
      message: "Quota 'STATIC_ROUTES_PER_NETWORK' exceeded. Limit: 250.0 globally.",
    });
    await assert.rejects(create('10.244.1.0/24'), (err: Error) => errorKind(err) === 'quota_exceeded');
    assert.deepEqual(await fake.routes(), [], 'nothing was created');
    assert.equal(await fake.pendingFaults(), 0);
  });

  test('other errors: 403 forbidden and 400 permanent, 500 and a failed list retryable, an operation error by its status', async () => {
    const create = (cidr: string) =>
      routes.createRoute('kubernetes', 'h', wantRoute('node1', cidr), callOptions());
    await fake.inject({
      api: 'routes.insert',
      status: 403,
      reason: 'forbidden',
      message:
        "Required 'compute.routes.create' permission for 'projects/k8s-project/global/routes/kubernetes-h'",
    });
    await assert.rejects(
      create('10.244.1.0/24'),
      (err: Error) =>
        errorKind(err) === 'permanent' &&
        /compute\.routes\.create.*HTTP 403, reason forbidden/.test(err.message),
    );
    await fake.inject({
      api: 'routes.insert',
      status: 500,
      reason: 'backendError',
      message: 'Internal error. Please try again or contact Google Support.',
    });
    assert.equal(await kindOf(create('10.244.1.0/24')), 'retryable');
    await fake.inject({
      api: 'routes.list',
      status: 503,
      reason: 'backendError',
      message: 'The service is currently unavailable.',
    });
    assert.equal(await kindOf(routes.listRoutes('kubernetes', callOptions())), 'retryable');
    await fake.inject({
      api: 'routes.insert',
      opError: {
        code: 'RESOURCE_NOT_READY',
        message: "The resource 'projects/k8s-project/global/networks/k8s-net' is not ready",
        httpStatus: 400,
      },
    });
    assert.equal(await kindOf(create('10.244.1.0/24')), 'conflict');
    await fake.inject({
      api: 'routes.insert',
      opError: { code: 'INTERNAL_ERROR', message: 'Internal error.', httpStatus: 500 },
    });
    assert.equal(await kindOf(create('10.244.1.0/24')), 'retryable');
    // The API's own validation: an IPv4 CIDR with host bits is refused, permanently.
    assert.equal(await kindOf(create('10.244.1.7/24')), 'permanent');
    assert.deepEqual(await fake.routes(), []);
  });

  test('an aborted signal ends a long operation wait with AbortError', async () => {
    await fake.configure({ opPolls: 100_000, waitSteps: 5 });
    const stop = new AbortController();
    const call = routes.createRoute(
      'kubernetes',
      UID1,
      wantRoute('node1', '10.244.1.0/24'),
      callOptions(stop.signal),
    );
    const waits = async (): Promise<number> =>
      (await fake.requests()).filter((e) => e.api === 'globalOperations.wait').length;
    for (let i = 0; i < 500 && (await waits()) < 2; i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok((await waits()) >= 2, 'the operation was waited on');
    stop.abort();
    await assert.rejects(call, { name: 'AbortError' });
  });

  test('the factory: gce.conf with token-url (upstream AltTokenSource), itself authenticated by the metadata server', async () => {
    // Application Default Credentials find no key file (an empty gcloud config) and ask the metadata server.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gce-adc-'));
    const keys = ['GOOGLE_APPLICATION_CREDENTIALS', 'CLOUDSDK_CONFIG', 'GCE_METADATA_HOST'] as const;
    const saved = keys.map((k) => process.env[k]);
    try {
      delete process.env['GOOGLE_APPLICATION_CREDENTIALS'];
      process.env['CLOUDSDK_CONFIG'] = dir;
      process.env['GCE_METADATA_HOST'] = fake.endpoint.replace('http://', '');
      const cloud = buildGceProvider(
        gceConf(
          fake.api,
          `token-url = ${fake.endpoint}/alt-token\ntoken-body = "{\\"scope\\": \\"compute\\"}"\n`,
        ),
        nodeLister(NODES),
      );
      assert.equal(cloud.name, 'gce');
      assert.deepEqual(cloud.writeLimit, { qps: 25, burst: 50 });
      assert.deepEqual(cloud.routeTargetKeys, ['uid', 'providerID']);
      const r = cloud.routes()!;
      await r.createRoute('kubernetes', UID1, wantRoute('node1', '10.244.1.0/24'), callOptions());
      await r.createRoute('kubernetes', UID10, wantRoute('node10', '10.244.10.0/24'), callOptions());
      const log = await fake.requests();
      const tokens = log.filter((e) => e.api === 'metadata.token' || e.api === 'alt.token');
      assert.deepEqual(
        tokens.map((e) => `${e.api} ${e.status}`),
        ['metadata.token 200', 'alt.token 200'],
        'each token fetched once, then cached',
      );
      // The fake records a request when its handler returns: the previous test's aborted operation wait
      // can be recorded after this test's reset, never answered (status 0). Every call of this test is answered.
      const api = log.filter(
        (e) => e.status !== 0 && (e.api.startsWith('routes.') || e.api.startsWith('globalOperations.')),
      );
      assert.ok(
        api.length >= 4 && api.every((e) => /^alt-token-\d+$/.test(e.token ?? '')),
        `every Compute call carries the token-url token: ${JSON.stringify(api.filter((e) => !/^alt-token-\d+$/.test(e.token ?? '')))}`,
      );
    } finally {
      keys.forEach((k, i) => {
        if (saved[i] === undefined) delete process.env[k];
        else process.env[k] = saved[i];
      });
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
