// The self-contained HTML report: the comparison table, the checks and
// charts. Charts are Vega-Lite specs compiled and rendered to SVG in Node, so
// the file needs no script or network access to view.
import * as vega from 'vega';
import * as vl from 'vega-lite';
import type { TopLevelSpec } from 'vega-lite';
import type { Comparison } from './compare.ts';
import { COLUMN_LABELS, describeScenario, describeTimeline, tableRows } from './report.ts';
import { OPS, type Mode, type ModeResult } from './run.ts';

export async function renderSVG(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(vl.compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

const OP_LABEL = { list: 'ListRoutes', create: 'CreateRoute', delete: 'DeleteRoute' } as const;
const OP_COLORS = ['#4c78a8', '#54a24b', '#e45756'];
const MODES = ['periodic', 'watch-upstream', 'watch'];
const MODE_COLORS = ['#f58518', '#9d9d9d', '#4c78a8'];

function callsSpec(r: ModeResult, yMax: number): TopLevelSpec {
  const values = OPS.flatMap((op) =>
    r.perMinute[op].map((calls, minute) => ({ minute, operation: OP_LABEL[op], calls })),
  ).filter((v) => v.calls > 0);
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: `${r.mode} mode: cloud API calls per simulated minute`,
    width: 720,
    height: 180,
    data: { values },
    mark: { type: 'bar', width: { band: 0.9 } },
    encoding: {
      x: {
        field: 'minute',
        type: 'ordinal',
        title: 'simulated minute',
        scale: { domain: Array.from({ length: r.perMinute.list.length }, (_, i) => i) },
        axis: { labelExpr: 'datum.value % 5 === 0 ? datum.label : ""', labelAngle: 0 },
      },
      y: {
        field: 'calls',
        type: 'quantitative',
        aggregate: 'sum',
        title: 'calls',
        scale: { domain: [0, yMax] },
      },
      color: {
        field: 'operation',
        type: 'nominal',
        scale: { domain: Object.values(OP_LABEL), range: OP_COLORS },
      },
    },
  };
}

function cumulativeListSpec(runs: readonly ModeResult[]): TopLevelSpec {
  const values = runs.flatMap((r) => {
    let sum = 0;
    return r.perMinute.list.map((n, minute) => ({ mode: r.mode, minute: minute + 1, calls: (sum += n) }));
  });
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: 'ListRoutes calls, cumulative',
    width: 720,
    height: 180,
    data: { values },
    mark: { type: 'line', interpolate: 'step-after', point: false },
    encoding: {
      x: { field: 'minute', type: 'quantitative', title: 'simulated minute' },
      y: { field: 'calls', type: 'quantitative', title: 'ListRoutes calls so far' },
      color: { field: 'mode', type: 'nominal', scale: { domain: MODES, range: MODE_COLORS } },
    },
  };
}

function latencySpec(runs: readonly ModeResult[]): TopLevelSpec {
  const values = runs.flatMap((r) =>
    r.latencies.map((l) => ({ mode: r.mode, cause: l.cause, seconds: Math.max(0.01, l.seconds) })),
  );
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: 'Route-creation latency (node created -> route created), cumulative distribution',
    width: 720,
    height: 220,
    data: { values },
    transform: [
      { window: [{ op: 'cume_dist', as: 'fraction' }], sort: [{ field: 'seconds' }], groupby: ['mode'] },
    ],
    mark: { type: 'line', interpolate: 'step-after', point: true },
    encoding: {
      x: { field: 'seconds', type: 'quantitative', scale: { type: 'log' }, title: 'seconds (log scale)' },
      y: {
        field: 'fraction',
        type: 'quantitative',
        title: 'fraction of joined nodes',
        axis: { format: '%' },
      },
      color: { field: 'mode', type: 'nominal', scale: { domain: MODES, range: MODE_COLORS } },
    },
  };
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function figure(id: string, svg: string, caption: string): string {
  return `<figure id="${id}">${svg}<figcaption>${esc(caption)}</figcaption></figure>`;
}

function tableHTML(c: Comparison): string {
  const head = COLUMN_LABELS.map((l) => `<th>${esc(l)}</th>`).join('');
  const out = [`<table><thead><tr><th></th>${head}<th></th></tr></thead><tbody>`];
  for (const r of tableRows(c)) {
    if (typeof r === 'string') out.push(`<tr class="group"><th colspan="5">${esc(r)}</th></tr>`);
    else
      out.push(
        `<tr><td>${esc(r[0])}</td>${[r[1], r[2], r[3]].map((x) => `<td class="n">${esc(x)}</td>`).join('')}<td class="note">${esc(r[4] ?? '')}</td></tr>`,
      );
  }
  out.push('</tbody></table>');
  return out.join('\n');
}

function checksHTML(c: Comparison): string {
  const items = c.checks.map((k) => {
    const mark = k.pass === undefined ? 'N/A' : k.pass ? 'PASS' : 'FAIL';
    return `<li class="${mark.replace('/', '').toLowerCase()}"><b>${mark}</b> ${esc(k.claim)}: ${esc(k.detail)}</li>`;
  });
  return `<ul class="checks">${items.join('')}</ul>`;
}

const STYLE = `body{font-family:system-ui,sans-serif;max-width:960px;margin:2em auto;color:#222}
table{border-collapse:collapse;font-size:14px}td,th{padding:2px 10px;text-align:left}
td.n{text-align:right;font-variant-numeric:tabular-nums}td.note{color:#666}
tr.group th{padding-top:10px;border-bottom:1px solid #ccc}
ul.checks{list-style:none;padding:0}li.pass b{color:#2a7}li.fail b{color:#c33}li.na b{color:#888}
figure{margin:1.5em 0}figcaption{color:#666;font-size:13px}`;

export async function htmlReport(
  c: Comparison,
  runs: Readonly<Record<Mode, ModeResult>>,
  wallMs: number,
): Promise<string> {
  const yMax = Math.max(
    1,
    ...Object.values(runs).flatMap((r) =>
      r.perMinute.list.map((_, i) => OPS.reduce((s, op) => s + r.perMinute[op][i]!, 0)),
    ),
  );
  const figures = [
    figure(
      'calls-periodic',
      await renderSVG(callsSpec(runs.periodic, yMax)),
      'Periodic mode lists all routes every 10 s whatever happens in the cluster.',
    ),
    figure(
      'calls-watch-upstream',
      await renderSVG(callsSpec(runs['watch-upstream'], yMax)),
      'Watch mode as upstream ships it lists all routes for every node event (at most every 10 s).',
    ),
    figure(
      'calls-watch',
      await renderSVG(callsSpec(runs.watch, yMax)),
      "Watch mode with this project's defaults plans node events against the route cache: writes only, and a list at start, after failures and at the half-hourly safety resync.",
    ),
    figure(
      'list-cumulative',
      await renderSVG(cumulativeListSpec([runs.periodic, runs['watch-upstream'], runs.watch])),
      'ListRoutes calls so far in the three columns.',
    ),
  ];
  if (Object.values(runs).some((r) => r.latencies.length > 0))
    figures.push(
      figure(
        'latency',
        await renderSVG(latencySpec([runs.periodic, runs['watch-upstream'], runs.watch])),
        'Each point is one joined node. Nodes that join during the throttling window make the tail.',
      ),
    );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Route controller simulation: periodic vs watch (upstream) vs watch (ours)</title>
<style>${STYLE}</style></head><body>
<h1>Route controller simulation: periodic, watch as upstream ships it, watch with this project's defaults</h1>
<p>${esc(describeScenario(c.scenario))}</p>
<p>${esc(describeTimeline(c))}</p>
${tableHTML(c)}
<h2>Checks</h2>
${checksHTML(c)}
<h2>Charts</h2>
${figures.join('\n')}
<p class="note">Simulated in virtual time with the in-memory cluster and cloud; total wall time ${(wallMs / 1000).toFixed(1)} s.</p>
</body></html>
`;
}
