// What a throttling cloud receives (SPEC R68–R70, R85, R111, R112), counted for
// every pacing configuration in both modes: 200 nodes join within 2 s, the cloud
// refills its real limit and answers the rest throttled with the time of its next
// token. Upstream's route controller, modelled the same way (unpaced, no route
// cache), is the bound where the controller cannot know the limit; the cloud's
// own bound (its burst, then the rest at its rate) where it was told one.
// kubernetes/kubernetes#41671 is the bug these counts keep fixed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AWS_WRITE_LIMIT } from '../cloud/aws/index.ts';
import { AZURE_WRITE_LIMIT } from '../cloud/azure/index.ts';
import { GCE_WRITE_LIMIT } from '../cloud/gce/index.ts';
import { HCLOUD_WRITE_LIMIT } from '../cloud/hcloud/index.ts';
import { OPENSTACK_WRITE_LIMIT } from '../cloud/openstack/index.ts';
import type { WriteLimit } from '../core/write-pacer.ts';
import {
  cloudBoundMs,
  runThrottleBurst,
  type PacingConfig,
  type ThrottleBurstResult,
} from '../sim/throttle-burst.ts';

const CLOUD: WriteLimit = { qps: 5, burst: 50 };
const NODES = 200;
const SEED = Number(process.env['THROTTLE_SEED'] ?? 1);

const burst = (
  pacing: PacingConfig,
  mode: 'watch' | 'periodic',
  cloud = CLOUD,
): Promise<ThrottleBurstResult> =>
  runThrottleBurst({
    pacing,
    mode,
    cloud,
    nodes: NODES,
    joinWindowMs: 2000,
    seed: SEED,
    horizonMs: 4 * 3600_000,
  });

const show = (r: ThrottleBurstResult): string =>
  `${r.creates} creates (${r.refused} refused), converged ${r.convergedMs === undefined ? 'never' : `${r.convergedMs / 1000} s`}`;

describe(`a 200-join burst into a throttling cloud (seed ${SEED})`, () => {
  for (const mode of ['watch', 'periodic'] as const) {
    describe(`${mode} mode`, () => {
      let upstream: ThrottleBurstResult;
      it(`upstream's route controller (the model): every route made`, async () => {
        upstream = await burst({ kind: 'upstream' }, mode);
        assert.equal(upstream.routed, NODES, show(upstream));
        // Every missing route once per 10 s: the burst, then one refill's worth per round.
        assert.ok(upstream.creates >= 450, `the model storms as upstream does: ${show(upstream)}`);
      });

      it('library default, no declared limit: learns the pace (R111), every route made', async () => {
        const r = await burst({ kind: 'undeclared' }, mode);
        assert.equal(r.routed, NODES, show(r));
        assert.ok(r.creates <= upstream.creates, `no more than upstream: ${show(r)} vs ${show(upstream)}`);
        assert.ok(
          r.convergedMs! <= upstream.convergedMs!,
          `no later than upstream: ${show(r)} vs ${show(upstream)}`,
        );
        if (mode === 'watch') assert.ok(r.creates <= 300, show(r));
      });

      it('--cloud-write-qps=0: never more than upstream (R112)', async () => {
        const r = await burst({ kind: 'unpaced' }, mode);
        assert.equal(r.routed, NODES, show(r));
        assert.ok(r.creates <= upstream.creates, `${show(r)} vs ${show(upstream)}`);
        assert.ok(r.convergedMs! <= upstream.convergedMs!, `${show(r)} vs ${show(upstream)}`);
      });

      it('a fixed budget at the real limit: nothing refused, one call per route', async () => {
        const r = await burst({ kind: 'fixed', qps: 5, burst: 50 }, mode);
        assert.equal(r.routed, NODES, show(r));
        assert.equal(r.refused, 0, show(r));
        assert.equal(r.creates, NODES);
        assert.ok(r.peakWritesPerSecond <= CLOUD.burst + CLOUD.qps, `${r.peakWritesPerSecond}/s`);
      });

      it('a fixed budget above the real limit keeps its rate: refusals, but every route made', async () => {
        const r = await burst({ kind: 'fixed', qps: 10, burst: 100 }, mode);
        assert.equal(r.routed, NODES, show(r));
        assert.ok(r.refused > 0, 'a fixed budget does not adapt (R68)');
        assert.ok(r.creates <= upstream.creates, `${show(r)} vs ${show(upstream)}`);
      });
    });
  }

  describe('first contact (R137): the joins handed over at once or spread, the cloud unknown', () => {
    for (const joinWindowMs of [0, 100, 500, 2000])
      for (const latencyMs of [50, 200])
        it(`joins within ${joinWindowMs} ms, ${latencyMs} ms per call: <= 250 createRoute calls, within 1.1x the cloud's bound`, async () => {
          const r = await runThrottleBurst({
            pacing: { kind: 'undeclared' },
            mode: 'watch',
            cloud: CLOUD,
            nodes: NODES,
            joinWindowMs,
            latencyMs,
            seed: SEED,
          });
          assert.equal(r.routed, NODES, show(r));
          assert.ok(r.creates <= 250, show(r));
          assert.ok(r.convergedMs! <= 1.1 * cloudBoundMs({ cloud: CLOUD, nodes: NODES }), show(r));
        });

    const roomy: WriteLimit = { qps: 10_000, burst: 10_000 };
    for (const [nodes, boundMs] of [
      [200, 5000],
      [1000, 7000],
    ] as const)
      it(`a cloud that takes everything: ${nodes} joins at once routed within ${boundMs / 1000} s, nothing refused`, async () => {
        const at = { mode: 'watch', cloud: roomy, nodes, joinWindowMs: 0, seed: SEED } as const;
        const r = await runThrottleBurst({ pacing: { kind: 'undeclared' }, ...at });
        assert.equal(r.refused, 0, show(r));
        assert.ok(r.convergedMs! <= boundMs, show(r));
        assert.ok(r.convergedMs! > 2000, `the slow start paced them: ${show(r)}`);
        const unlimited = await runThrottleBurst({ pacing: { kind: 'unlimited' }, ...at });
        assert.ok(unlimited.convergedMs! <= 500, `'unlimited' is not slowed: ${show(unlimited)}`);
      });
  });

  const PROVIDERS: Record<string, WriteLimit> = {
    aws: AWS_WRITE_LIMIT,
    azure: AZURE_WRITE_LIMIT,
    gce: GCE_WRITE_LIMIT,
    hcloud: HCLOUD_WRITE_LIMIT,
    openstack: OPENSTACK_WRITE_LIMIT,
  };
  describe('daemon defaults per built-in provider, the cloud giving half the declared limit', () => {
    for (const [name, declared] of Object.entries(PROVIDERS)) {
      const real = { qps: declared.qps / 2, burst: Math.floor(declared.burst / 2) };
      it(`${name}: every node routed within 1.5x the cloud's own bound, <= 300 createRoute calls (watch)`, async () => {
        const r = await burst({ kind: 'declared', declared }, 'watch', real);
        const bound = cloudBoundMs({ cloud: real, nodes: NODES });
        assert.equal(r.routed, NODES, show(r));
        assert.ok(r.convergedMs! <= 1.5 * bound, `${show(r)}; the cloud's bound is ${bound / 1000} s`);
        assert.ok(r.creates <= 300, show(r));
      });

      it(`${name}: periodic mode sends no more than upstream's`, async () => {
        const r = await burst({ kind: 'declared', declared }, 'periodic', real);
        const up = await burst({ kind: 'upstream' }, 'periodic', real);
        assert.equal(r.routed, NODES, show(r));
        assert.ok(r.creates <= up.creates, `${show(r)} vs upstream ${show(up)}`);
      });
    }

    it('the declared limit exactly right: nothing refused (R68)', async () => {
      const r = await burst({ kind: 'declared', declared: CLOUD }, 'watch');
      assert.equal(r.routed, NODES, show(r));
      assert.equal(r.refused, 0, show(r));
    });
  });
});
