// R115, R118: the gce plug-in's ROUTES quota: read at most once per refresh, moved by the
// cluster's own routes in between, a passing failure keeps the last read.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RetryableError } from '../../core/errors.ts';
import type { ComputeApi, GceProject } from './client.ts';
import { ProjectRoutesQuota, QUOTA_REFRESH_MS } from './room.ts';

function api(answers: (GceProject | Error)[]): { api: ComputeApi; calls: () => number } {
  let calls = 0;
  const stub = {
    getProject: async (): Promise<GceProject> => {
      const a = answers[Math.min(calls++, answers.length - 1)]!;
      if (a instanceof Error) throw a;
      return a;
    },
  } as unknown as ComputeApi;
  return { api: stub, calls: () => calls };
}

const project = (limit: number, usage: number): GceProject => ({
  quotas: [
    { metric: 'NETWORKS', limit: 15, usage: 1 },
    { metric: 'ROUTES', limit, usage },
  ],
});
const signal = new AbortController().signal;

describe('gce: ProjectRoutesQuota', () => {
  test('one projects.get per refresh; between reads the usage moves with the cluster’s routes', async () => {
    let now = 0;
    const a = api([project(250, 40), project(300, 45)]);
    const q = new ProjectRoutesQuota(a.api, 'p', () => now);
    assert.deepEqual(
      [(await q.room(10, signal))?.used, (await q.room(12, signal))?.used, (await q.room(9, signal))?.used],
      [40, 42, 39],
    );
    assert.equal(a.calls(), 1);
    now += QUOTA_REFRESH_MS;
    const r = await q.room(12, signal);
    assert.deepEqual([r?.limit, r?.used, a.calls()], [300, 45, 2]);
    assert.equal(r?.container, 'project p (ROUTES quota)');
  });

  test('a passing failure keeps the last read; without one it is the caller’s', async () => {
    let now = 0;
    const a = api([project(250, 40), new RetryableError('503')]);
    const q = new ProjectRoutesQuota(a.api, 'p', () => now);
    await q.room(0, signal);
    now += QUOTA_REFRESH_MS;
    assert.equal((await q.room(0, signal))?.limit, 250);
    const failing = api([new RetryableError('503'), project(250, 1)]);
    let t = 0;
    const b = new ProjectRoutesQuota(failing.api, 'p', () => t);
    await assert.rejects(b.room(0, signal), /503/);
    // Not asked again before the refresh (a missing permission would fail every list).
    assert.equal(await b.room(0, signal), undefined);
    assert.equal(failing.calls(), 1);
    t += QUOTA_REFRESH_MS;
    assert.equal((await b.room(0, signal))?.limit, 250);
  });

  test('no ROUTES quota in the answer, or no projects.get: the cloud does not tell', async () => {
    assert.equal(await new ProjectRoutesQuota(api([{ quotas: [] }]).api, 'p').room(0, signal), undefined);
    assert.equal(await new ProjectRoutesQuota({} as ComputeApi, 'p').room(0, signal), undefined);
  });
});
