// The simulator's claims on small scenarios, its end state and its report.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { main } from './cli.ts';
import { percentile, unmatchedReconciles } from './compare.ts';
import { htmlReport } from './report-html.ts';
import { checksText, textTable } from './report.ts';
import { buildTimeline, nodeName, PRESETS, validateScenario, type Scenario } from './scenario.ts';
import { neededBy } from './needed-by.ts';
import { SAFETY_RESYNC_MS } from './run.ts';
import { simulate, type Simulation } from './simulate.ts';

// The hour matters for the ListRoutes ratio (periodic mode lists 360 times an
// hour whatever the cluster size); 50 nodes keep the run short.
const small: Scenario = { ...PRESETS.default, name: 'small', nodes: 50, burst: 10 };

let cached: Promise<Simulation> | undefined;
const smallRun = (): Promise<Simulation> => (cached ??= simulate(small));

describe('simulator: small default-shaped scenario (50 nodes, 1h)', () => {
  it('watch mode lists routes at least 10x less often, and no heartbeat causes a reconcile', async () => {
    const { comparison: c, runs, control } = await smallRun();
    assert.equal(c.periodic.calls.list, 360, 'one ListRoutes per 10 s tick');
    assert.ok(c.watch.calls.list * 10 <= c.periodic.calls.list, `watch ${c.watch.calls.list} lists`);
    assert.ok(runs.watch.heartbeatsSent > 15_000, 'heartbeats were driven');
    assert.equal(control.heartbeatsSent, 0);
    assert.equal(c.control.heartbeatCaused, 0);
    assert.deepEqual(
      runs.watch.reconciles.map((r) => `${r.at} ${r.trigger}`),
      control.reconciles.map((r) => `${r.at} ${r.trigger}`),
      'same reconciles with and without heartbeats',
    );
    assert.equal(c.periodic.byTrigger.periodic, c.periodic.reconciles, 'periodic mode only has ticks');
    // R49: a safety resync comes 0.9–1.1 P after the last listing reconcile; R109: after one whose
    // list was throttled, from 0.09 P (and the throttled list kept the route cache).
    let lastList: (typeof runs.watch.reconciles)[number] | undefined;
    for (const r of runs.watch.reconciles) {
      if (r.trigger === 'periodic') {
        assert.ok(lastList, 'a list precedes every resync');
        const min = (lastList.listThrottled ? 0.09 : 0.9) * SAFETY_RESYNC_MS;
        assert.ok(r.at - lastList.at >= min, `resync at ${r.at} ms, ${r.at - lastList.at} ms after a list`);
      }
      if (r.source === 'list') lastList = r;
    }
  });

  it('reports every claim; all but the latency claim hold whatever the seed', async () => {
    const { comparison: c } = await smallRun();
    assert.equal(c.checks.length, 6);
    // The latency tail is made by the joins during the throttling window, where
    // watch mode's exponential retry (R46) competes with periodic's 10 s tick:
    // seed-dependent, so only reported (see docs/simulator.md).
    const failed = c.checks
      .filter((k) => k.pass === false && !k.claim.includes('p99'))
      .map((k) => `${k.claim}: ${k.detail}`);
    assert.deepEqual(failed, []);
    assert.equal(typeof c.checks.find((k) => k.claim.includes('p99'))?.pass, 'boolean');
    assert.ok(c.watch.latency && c.periodic.latency);
    assert.equal(c.periodic.latencyMetricCount, c.periodic.latency.n, 'the histogram saw every join');
    assert.equal(c.watch.latencyMetricCount, c.watch.latency.n);
    assert.ok(
      c.watch.latencyByCause.throttle!.max > 30,
      'joins during throttling wait for the window to end',
    );
  });

  it('every node ends with its route and False/RouteCreated in both modes', async () => {
    const { comparison: c, timeline } = await smallRun();
    const joins = timeline.filter((e) => e.kind === 'join').length;
    const leaves = timeline.filter((e) => e.kind === 'leave').length;
    // With the route cache, the route deleted out-of-band comes back with the next list (R49's
    // safety resync, within 1.1 h of the last one), which may fall after the hour.
    const unseen = c.watch.oobUnseen === undefined ? 0 : 1;
    for (const m of [c.periodic, c.watchUpstream, c.watch]) {
      const f = m.final;
      assert.equal(f.nodes, small.nodes + joins - leaves);
      assert.equal(f.routes, f.nodes - (m === c.watch ? unseen : 0));
      assert.equal(f.missingRoutes, m === c.watch ? unseen : 0);
      assert.equal(f.staleRoutes, 0);
      assert.equal(f.badConditions, 0);
    }
    assert.equal(c.periodic.unrouted + c.watch.unrouted, 0);
    // The out-of-band delete is repaired by the next tick in periodic mode, by the next list in watch mode.
    assert.ok(c.periodic.oobRepairMs !== undefined && c.periodic.oobRepairMs <= 10_100);
    assert.ok(c.watchUpstream.oobRepairMs !== undefined);
    assert.ok((c.watch.oobRepairMs === undefined) !== (c.watch.oobUnseen === undefined));
    if (c.watch.oobUnseen !== undefined)
      assert.ok(
        small.durationMs - c.watch.oobUnseen.lastListMs <= 1.1 * 3_600_000,
        'the resync is not overdue',
      );
  });

  it('prints a side-by-side table and PASS/FAIL checks', async () => {
    const { comparison: c } = await smallRun();
    const table = textTable(c);
    assert.match(table, /^\s+periodic\s+watch \(upstream\)\s+watch \(ours\)$/m);
    assert.match(table, /ListRoutes\s+360\s+\d+\s+\d+\s+[\d.]+x fewer/);
    assert.match(table, /all p99/);
    assert.match(table, /workqueue_retries_total/);
    assert.match(checksText(c), /^ {2}PASS {2}no reconcile is caused by a heartbeat/m);
  });

  it('writes a self-contained HTML report with an SVG chart per mode', async () => {
    const sim = await smallRun();
    const html = await htmlReport(sim.comparison, sim.runs, sim.wallMs);
    for (const id of ['calls-periodic', 'calls-watch-upstream', 'calls-watch', 'list-cumulative', 'latency'])
      assert.match(html, new RegExp(`<figure id="${id}"><svg[^>]*>`), id);
    assert.match(html, /periodic mode: cloud API calls per simulated minute/);
    assert.match(html, /watch mode: cloud API calls per simulated minute/);
    assert.doesNotMatch(html, /<script/);
  });
});

describe('simulator: isolated joins', () => {
  it('route-creation p99 is lower in watch mode when nodes join one at a time', async () => {
    const s: Scenario = {
      ...PRESETS.default,
      name: 'isolated',
      nodes: 50,
      churn: 2,
      burst: 0,
      throttleWindow: false,
      outOfBandDelete: false,
      addressChange: false,
    };
    const { comparison: c } = await simulate(s);
    assert.ok(c.watch.latency && c.periodic.latency);
    assert.equal(c.checks.find((k) => k.claim.includes('p99'))?.pass, true);
    // Watch mode reconciles at once (list + create, 50 ms each); periodic mode waits for its next tick.
    assert.ok(c.watch.latency.p50 < 0.2, `watch p50 ${c.watch.latency.p50}`);
    assert.ok(c.periodic.latency.p50 > 1, `periodic p50 ${c.periodic.latency.p50}`);
    assert.ok(c.listRatio >= 10);
  });
});

describe('simulator: the churn hour with a throttling window (1,000 nodes, churn 10, no burst, no write limit)', () => {
  for (const seed of [1, 2]) {
    it(`seed ${seed}: watch mode lists at most 3 times and ends with every route and condition right (R49, R85, R109)`, async () => {
      const s: Scenario = {
        ...PRESETS.default,
        nodes: 1000,
        churn: 10,
        burst: 0,
        cloudWriteRatePerSec: 0,
        seed,
      };
      const { comparison: c, runs } = await simulate(s);
      // The start list, the safety resync (which the throttling window may defer once, R109), no more.
      assert.ok(c.watch.calls.list <= 3, `seed ${seed}: ${c.watch.calls.list} ListRoutes`);
      assert.deepEqual(
        {
          missing: c.watch.final.missingRoutes,
          stale: c.watch.final.staleRoutes,
          conditions: c.watch.final.badConditions,
        },
        { missing: 0, stale: 0, conditions: 0 },
        `seed ${seed}`,
      );
      assert.ok(c.watch.oobRepairMs !== undefined, 'the route deleted out-of-band is back');
      assert.equal(c.watch.wrongDeletes, 0);
      // The address change deletes its node's old route: a delete, but not a wrong one.
      assert.ok(c.watch.calls.delete > 60);
      assert.ok(
        runs.watch.reconciles.some((r) => r.trigger === 'periodic' && r.listThrottled),
        'the resync fell into the throttling window (what this scenario checks)',
      );
    });
  }
});

describe('simulator: idle scenario', () => {
  it('heartbeats only: over 100x fewer ListRoutes; watch mode reconciles at start and at the safety resync', async () => {
    const { comparison: c } = await simulate({ ...PRESETS.idle, nodes: 50 });
    assert.ok(c.listRatio > 100, `ratio ${c.listRatio}`);
    // R49: 30 min ±10 % after the start list; the next one (54–66 min) falls after the hour for seed 1.
    assert.equal(c.watch.reconciles, 2);
    assert.equal(c.watch.byTrigger.periodic, 1);
    assert.equal(c.watch.calls.create + c.watch.calls.delete + c.periodic.calls.create, 0);
    assert.equal(c.listRatioRequired, 100);
    assert.equal(c.checks.find((k) => k.claim.includes('p99'))?.pass, undefined, 'n/a without joins');
  });
});

describe('simulator: timeline', () => {
  it('is a pure function of the seed, and leaves only hit nodes that are present', () => {
    const s: Scenario = { ...PRESETS.default, churn: 5 };
    assert.deepEqual(buildTimeline(s), buildTimeline(s));
    assert.notDeepEqual(buildTimeline(s), buildTimeline({ ...s, seed: 2 }));
    const present = new Set(Array.from({ length: s.nodes }, (_, i) => i));
    let last = -1;
    for (const e of buildTimeline(s)) {
      assert.ok(e.at >= last && e.at < s.durationMs);
      last = e.at;
      if (e.kind === 'join') {
        assert.ok(!present.has(e.index));
        present.add(e.index);
      } else if (e.kind === 'leave') assert.ok(present.delete(e.index), `${nodeName(e.index)} present`);
      else if (e.kind !== 'throttle') assert.ok(present.has(e.index));
    }
    assert.equal(buildTimeline(PRESETS.idle).length, 0);
  });

  it('validates scenarios', () => {
    assert.deepEqual(validateScenario(PRESETS.default), []);
    assert.ok(validateScenario({ ...PRESETS.default, durationMs: 30_000 }).length > 0);
    assert.ok(validateScenario({ ...PRESETS.default, heartbeatIntervalMs: 1500 }).length > 0);
    assert.ok(validateScenario({ ...PRESETS.default, nodes: 70_000 }).length > 0);
  });

  it('a wrong delete is one of the route a present node needs: its pod CIDR, to its current address', () => {
    const node = {
      metadata: { name: 'n' },
      spec: { podCIDRs: ['10.0.1.0/24'] },
      status: { addresses: [{ type: 'InternalIP', address: '172.16.0.1' }] },
    };
    const route = (cidr: string, ip: string) => ({
      name: '',
      targetNode: 'n',
      destinationCIDR: cidr,
      targetNodeAddresses: [{ type: 'InternalIP', address: ip }],
      enableNodeAddresses: false,
      blackhole: false,
    });
    assert.equal(neededBy(node, route('10.0.1.0/24', '172.16.0.1')), true);
    assert.equal(neededBy(node, route('10.0.1.0/24', '172.16.9.9')), false, 'the old address after a change');
    assert.equal(neededBy(node, route('10.0.2.0/24', '172.16.0.1')), false, 'not its pod CIDR');
    assert.equal(neededBy(undefined, route('10.0.1.0/24', '172.16.0.1')), false, 'the node left');
    assert.equal(neededBy(node, route('10.0.1.0', '172.16.0.1')), false, 'not a CIDR');
    assert.equal(
      neededBy(node, { ...route('10.0.1.0/24', '172.16.0.1'), blackhole: true }),
      false,
      'a blackhole',
    );
    assert.equal(
      neededBy(node, { ...route('10.0.1.0/24', ''), targetNodeAddresses: [] }),
      true,
      'no address named',
    );
  });

  it('percentiles are nearest-rank; reconciles are matched by start and trigger', () => {
    const v = Array.from({ length: 100 }, (_, i) => i + 1);
    assert.equal(percentile(v, 0.5), 50);
    assert.equal(percentile(v, 0.99), 99);
    assert.equal(percentile([7], 0.99), 7);
    const r = (at: number, trigger: 'node_change' | 'retry') =>
      ({
        at,
        trigger,
        outcome: 'noop',
        created: 0,
        deleted: 0,
        handover: false,
        source: 'list',
        listThrottled: false,
      }) as const;
    assert.equal(unmatchedReconciles([r(0, 'node_change'), r(5, 'retry')], [r(0, 'node_change')]), 1);
    assert.equal(unmatchedReconciles([r(0, 'node_change')], [r(0, 'node_change'), r(5, 'retry')]), 0);
  });
});

describe('simulator: command line', () => {
  it('runs a tiny scenario, prints progress, table and checks, writes HTML and JSON', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sim-'));
    try {
      const out: string[] = [];
      const err: string[] = [];
      const report = join(dir, 'r.html');
      const json = join(dir, 'r.json');
      const code = await main(
        [
          '--nodes',
          '20',
          '--duration',
          '10m',
          '--burst',
          '4',
          '--cloud-latency',
          '20ms',
          '--report',
          report,
          '--json',
          json,
        ],
        { out: (l) => out.push(l), err: (l) => err.push(l) },
      );
      assert.equal(code, 0, err.join('\n'));
      const text = out.join('\n');
      assert.match(text, /scenario default \(modified\): 20 nodes, 10m0s simulated/);
      assert.match(text, /^\[periodic\] sim 00:10:00/m);
      assert.match(text, /^\[watch {3}\] sim 00:05:00/m);
      assert.match(text, /^checks$/m);
      assert.match(text, /^ {2}(PASS|FAIL) {2}watch mode makes at least 10x fewer ListRoutes calls/m);
      assert.match(text, new RegExp(`report written to ${report.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
      assert.match(await readFile(report, 'utf8'), /<svg/);
      const data = JSON.parse(await readFile(json, 'utf8')) as {
        comparison: { periodic: { calls: { list: number } } };
      };
      assert.equal(data.comparison.periodic.calls.list, 60);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('rejects bad flags with exit code 1 and prints help with 0', async () => {
    const err: string[] = [];
    const io = { out: () => {}, err: (l: string) => err.push(l) };
    assert.equal(await main(['--nodes', 'many', '--duration', 'soon'], io), 1);
    assert.match(err.join('\n'), /invalid --nodes "many"/);
    assert.match(err.join('\n'), /invalid --duration "soon"/);
    assert.equal(await main(['--bogus'], io), 1);
    assert.equal(await main(['--scenario', 'busy'], io), 1);
    const out: string[] = [];
    assert.equal(await main(['--help'], { out: (l) => out.push(l), err: () => {} }), 0);
    assert.match(out.join('\n'), /--cloud-rate-limit N/);
  });
});
