// Nodes without a gce:// providerID in a multizone (or regional) cluster,
// against the GCE fake: found by name in every zone of local-zone's region
// (zones.list, as cloud-provider-gcp's multizone mode manages them), never in
// another region's zones; in single-zone mode only local-zone is searched.
// Run: scripts/gce-fake.sh build && node --test test/integration/gce-multizone.test.ts
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { errorKind } from '../../src/core/errors.ts';
import type { Node } from '../../src/core/types.ts';
import { buildGceProvider } from '../../src/cloud/gce/index.ts';
import { gceFakeSkip, startGceFake } from '../support/gce-fake.ts';
import type { GceFake } from '../support/gce-fake.ts';
import { callOptions, nodeLister, wantRoute } from '../support/provider-calls.ts';

const PROJECT = 'k8s-project';

interface Seed {
  node: string;
  instance: string;
  zone: string;
  cidr: string;
}

// Two nodes in zones other than local-zone, one named like a host name, one whose only instance is in another region.
const SEEDS: Seed[] = [
  { node: 'n-b', instance: 'n-b', zone: 'europe-west1-b', cidr: '10.244.1.0/24' },
  { node: 'n-c', instance: 'n-c', zone: 'europe-west1-c', cidr: '10.244.2.0/24' },
  { node: 'n-d.c.k8s-project.internal', instance: 'n-d', zone: 'europe-west1-d', cidr: '10.244.3.0/24' },
  { node: 'far', instance: 'far', zone: 'us-central1-a', cidr: '10.244.4.0/24' },
];
const NODES: Node[] = SEEDS.map((s, i) => ({
  metadata: { name: s.node, uid: `0b3a9c7e-3333-4d7e-9a57-00000000000${i}` },
  spec: { podCIDRs: [s.cidr] },
}));
const lister = nodeLister(NODES);

describe(
  'gce multizone: nodes without providerID across the region',
  { ...gceFakeSkip(), timeout: 120_000 },
  () => {
    let fake: GceFake;
    const routesFor = (extra: string) =>
      buildGceProvider(
        `[global]\nproject-id = ${PROJECT}\nnetwork-name = k8s-net\nlocal-zone = europe-west1-b\napi-endpoint = ${fake.api}\n${extra}`,
        lister,
        { token: async () => 'test-token' },
      ).routes()!;
    const create = (routes: ReturnType<typeof routesFor>, s: Seed) =>
      routes.createRoute(
        'kubernetes',
        NODES.find((n) => n.metadata?.name === s.node)!.metadata!.uid!,
        wantRoute(s.node, s.cidr),
        callOptions(),
      );

    before(async () => {
      fake = await startGceFake();
    });
    after(async () => {
      await fake?.stop();
    });
    beforeEach(async () => {
      await fake.reset();
      await fake.addInstances(...SEEDS.map((s) => ({ project: PROJECT, zone: s.zone, name: s.instance })));
    });

    for (const key of ['multizone = true', 'regional = true']) {
      test(`${key}: each node's instance found in its own zone of the region; another region's instance not found`, async () => {
        const routes = routesFor(`node-instance-prefix = n\n${key}\n`);
        for (const s of SEEDS.slice(0, 3)) await create(routes, s);
        const hops = (await fake.routes())
          .map((r) => `${r.destRange}>${r.nextHopInstance?.replace(/.*\/projects\//, '')}`)
          .sort();
        assert.deepEqual(hops, [
          `10.244.1.0/24>${PROJECT}/zones/europe-west1-b/instances/n-b`,
          `10.244.2.0/24>${PROJECT}/zones/europe-west1-c/instances/n-c`,
          `10.244.3.0/24>${PROJECT}/zones/europe-west1-d/instances/n-d`,
        ]);
        // In no zone of the region: permanent, and no lookup outside the region.
        await assert.rejects(
          create(routes, SEEDS[3]!),
          (err: Error) =>
            errorKind(err) === 'permanent' &&
            /no instance far is in any zone of region europe-west1 \(europe-west1-b, europe-west1-c, europe-west1-d\)/.test(
              err.message,
            ),
        );
        const log = await fake.requests();
        const zoneLists = log.filter((e) => e.api === 'zones.list');
        // Once at the first lookup, once more when "far" was in none of them (a zone may have been added).
        assert.deepEqual(
          zoneLists.map((e) => `${e.status} ${e.filter}`),
          ['200 region eq .*/regions/europe-west1', '200 region eq .*/regions/europe-west1'],
        );
        const gets = log
          .filter((e) => e.api === 'instances.get')
          .map((e) => e.path.replace(/.*\/zones\//, ''));
        assert.ok(
          gets.every((p) => p.startsWith('europe-west1-')),
          gets.join(),
        );
        assert.deepEqual(gets.slice(0, 6), [
          'europe-west1-b/instances/n-b',
          'europe-west1-b/instances/n-c',
          'europe-west1-c/instances/n-c',
          'europe-west1-b/instances/n-d',
          'europe-west1-c/instances/n-d',
          'europe-west1-d/instances/n-d',
        ]);
        assert.equal((await fake.routes()).length, 3, 'nothing written for "far"');
      });
    }

    test('single zone (neither key): only local-zone is searched; a node in another zone is a permanent error', async () => {
      const routes = routesFor('multizone = false\n');
      await create(routes, SEEDS[0]!);
      await assert.rejects(
        create(routes, SEEDS[1]!),
        (err: Error) =>
          errorKind(err) === 'permanent' && /no instance n-c in zone europe-west1-b/.test(err.message),
      );
      const log = await fake.requests();
      assert.deepEqual(
        log.filter((e) => e.api === 'zones.list'),
        [],
      );
      assert.deepEqual(
        log
          .filter((e) => e.api === 'instances.get')
          .map((e) => `${e.path.replace(/.*\/zones\//, '')} ${e.status}`),
        ['europe-west1-b/instances/n-b 200', 'europe-west1-b/instances/n-c 404'],
      );
      assert.equal((await fake.routes()).length, 1);
    });
  },
);
