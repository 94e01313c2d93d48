// The gce plug-in against Google's MockGCE (k8s-cloud-provider pkg/cloud,
// served as the Compute Engine v1 REST API by testenv/gce-fake): routes,
// names, paging, operations, errors and credentials, provider alone.
// Run: scripts/gce-fake.sh build && node --test test/integration/gce.test.ts
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { errorKind } from '../../src/core/errors.ts';
import { buildGceProvider } from '../../src/cloud/gce/index.ts';
import { gceFakeSkip } from '../support/gce-fake.ts';
import {
  gceConf,
  gceProviderFixture,
  kindOf,
  NETWORK,
  NODES,
  PROJECT,
  summary,
  UID1,
  UID10,
  UIDDS,
  ZONE,
} from '../support/gce-provider.ts';
import { callOptions, nodeLister, wantRoute } from '../support/provider-calls.ts';

describe("gce provider against Google's MockGCE", { ...gceFakeSkip(), timeout: 120_000 }, () => {
  const ctx = gceProviderFixture();

  test('create: upstream names, next hop from providerID, k8s-node-route, priority 1000, one wait per write', async () => {
    await ctx.fake.configure({ opPolls: 3, waitSteps: 1 });
    const created = await ctx.routes.createRoute(
      'kubernetes',
      UID10,
      wantRoute('node10', '10.244.10.0/24'),
      callOptions(),
    );
    assert.deepEqual(created, { ...wantRoute('node10', '10.244.10.0/24'), name: `kubernetes-${UID10}` });
    const [r] = await ctx.fake.routes();
    assert.equal(r?.name, `kubernetes-${UID10}`);
    assert.equal(r?.description, 'k8s-node-route');
    assert.equal(r?.priority, 1000);
    assert.match(r?.network ?? '', new RegExp(`/projects/${PROJECT}/global/networks/${NETWORK}$`));
    assert.match(
      r?.nextHopInstance ?? '',
      new RegExp(`/projects/${PROJECT}/zones/${ZONE}/instances/vm-node10$`),
    );
    const log = await ctx.fake.requests();
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
    await ctx.routes.createRoute('kubernetes', UIDDS, wantRoute('ds', '10.244.2.0/24'), callOptions());
    await ctx.routes.createRoute('kubernetes', UIDDS, wantRoute('ds', 'fd00:10:244:2::/64'), callOptions());
    const v6 = `kubernetes-${UIDDS.replace(/-/g, '')}-v6`;
    assert.deepEqual(
      summary(await ctx.fake.routes()),
      [`kubernetes-${UIDDS}=10.244.2.0/24>ds`, `${v6}=fd00:10:244:2::/64>ds`].sort(),
    );
    const listed = await ctx.routes.listRoutes('kubernetes', callOptions());
    assert.deepEqual(
      listed.map((r) => `${r.name} ${r.destinationCIDR} ${r.targetNode} ${r.blackhole}`).sort(),
      [`kubernetes-${UIDDS} 10.244.2.0/24 ds false`, `${v6} fd00:10:244:2::/64 ds false`].sort(),
    );
  });

  test("listRoutes: every page, and only this cluster's routes in this network with upstream's description", async () => {
    await ctx.fake.configure({ pageSize: 2 });
    for (const [n, uid, cidr] of [
      ['node1', UID1, '10.244.1.0/24'],
      ['node10', UID10, '10.244.10.0/24'],
      ['ds', UIDDS, '10.244.2.0/24'],
    ] as const)
      await ctx.routes.createRoute('kubernetes', uid, wantRoute(n, cidr), callOptions());
    const net = `https://www.googleapis.com/compute/v1/projects/${PROJECT}/global/networks/${NETWORK}`;
    const hop = `projects/${PROJECT}/zones/${ZONE}/instances/node1`;
    // Not ours: another cluster, a hand-made route, another network.
    await ctx.fake.insertRoute(PROJECT, {
      name: 'other-cluster-x',
      destRange: '10.244.7.0/24',
      network: net,
      nextHopInstance: hop,
      description: 'k8s-node-route',
    });
    await ctx.fake.insertRoute(PROJECT, {
      name: 'kubernetes-by-hand',
      destRange: '10.244.8.0/24',
      network: net,
      nextHopInstance: hop,
      description: 'to the VPN',
    });
    await ctx.fake.insertRoute(PROJECT, {
      name: 'kubernetes-elsewhere',
      destRange: '10.244.9.0/24',
      network: net.replace(NETWORK, 'other-net'),
      nextHopInstance: hop,
      description: 'k8s-node-route',
    });
    await ctx.fake.insertRoute(PROJECT, {
      name: 'kubernetes-to-gw',
      destRange: '10.244.6.0/24',
      network: net,
      nextHopIp: '10.0.0.9',
      description: 'k8s-node-route',
    });
    const listed = await ctx.routes.listRoutes('kubernetes', callOptions());
    assert.deepEqual(listed.map((r) => `${r.destinationCIDR}>${r.targetNode}`).sort(), [
      '10.244.1.0/24>node1',
      '10.244.10.0/24>node10',
      '10.244.2.0/24>ds',
    ]);
    const lists = (await ctx.fake.requests()).filter((e) => e.api === 'routes.list');
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
    await ctx.routes.createRoute('kubernetes', UID1, wantRoute('node1', '10.244.1.0/24'), o);
    assert.equal(
      await kindOf(ctx.routes.createRoute('kubernetes', UID1, wantRoute('node1', '10.244.1.0/24'), o)),
      'ok',
    );
    // Same name (hint), other destination: never success (R2).
    const other = ctx.routes.createRoute('kubernetes', UID1, wantRoute('node1', '10.244.99.0/24'), o);
    await assert.rejects(
      other,
      (err: Error) =>
        errorKind(err) === 'conflict' && /already exists for 10\.244\.1\.0\/24/.test(err.message),
    );
    const [listed] = await ctx.routes.listRoutes('kubernetes', o);
    await ctx.routes.deleteRoute('kubernetes', listed!, o);
    assert.deepEqual(await ctx.fake.routes(), []);
    assert.equal(await kindOf(ctx.routes.deleteRoute('kubernetes', listed!, o)), 'ok');
    const statuses = (await ctx.fake.requests())
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
    ctx.localZone = ZONE;
    ctx.routes = ctx.build();
    await ctx.routes.createRoute('kubernetes', UID1, wantRoute('node1', '10.244.1.0/24'), callOptions());
    await ctx.routes.createRoute(
      'kubernetes',
      'hint-byname',
      wantRoute('byname', '10.244.4.0/24'),
      callOptions(),
    );
    const get = (await ctx.fake.requests()).filter((e) => e.api === 'instances.get');
    assert.deepEqual(
      get.map((e) => e.path),
      [`/compute/v1/projects/${PROJECT}/zones/${ZONE}/instances/byname`],
    );
    await ctx.fake.deleteInstances({ project: PROJECT, zone: ZONE, name: 'node1' });
    const listed = await ctx.routes.listRoutes('kubernetes', callOptions());
    assert.deepEqual(listed.map((r) => `${r.targetNode} ${r.blackhole}`).sort(), [
      'byname false',
      'node1 true',
    ]);
    // Without local-zone, a node without providerID is a clear permanent error and no write.
    ctx.localZone = undefined;
    ctx.routes = ctx.build();
    const before = (await ctx.fake.requests()).length;
    await assert.rejects(
      ctx.routes.createRoute('kubernetes', 'h2', wantRoute('byname', '10.244.5.0/24'), callOptions()),
      (err: Error) =>
        errorKind(err) === 'permanent' &&
        /no gce:\/\/ providerID, and gce.conf sets no local-zone/.test(err.message),
    );
    assert.equal((await ctx.fake.requests()).length, before);
  });

  test('the factory: gce.conf with token-url (upstream AltTokenSource), itself authenticated by the metadata server', async () => {
    // Application Default Credentials find no key file (an empty gcloud config) and ask the metadata server.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gce-adc-'));
    const keys = ['GOOGLE_APPLICATION_CREDENTIALS', 'CLOUDSDK_CONFIG', 'GCE_METADATA_HOST'] as const;
    const saved = keys.map((k) => process.env[k]);
    try {
      delete process.env['GOOGLE_APPLICATION_CREDENTIALS'];
      process.env['CLOUDSDK_CONFIG'] = dir;
      process.env['GCE_METADATA_HOST'] = ctx.fake.endpoint.replace('http://', '');
      const cloud = buildGceProvider(
        gceConf(
          ctx.fake.api,
          `token-url = ${ctx.fake.endpoint}/alt-token\ntoken-body = "{\\"scope\\": \\"compute\\"}"\n`,
        ),
        nodeLister(NODES),
      );
      assert.equal(cloud.name, 'gce');
      assert.deepEqual(cloud.writeLimit, { qps: 25, burst: 50 });
      assert.deepEqual(cloud.routeTargetKeys, ['uid', 'providerID']);
      const r = cloud.routes()!;
      await r.createRoute('kubernetes', UID1, wantRoute('node1', '10.244.1.0/24'), callOptions());
      await r.createRoute('kubernetes', UID10, wantRoute('node10', '10.244.10.0/24'), callOptions());
      const log = await ctx.fake.requests();
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
