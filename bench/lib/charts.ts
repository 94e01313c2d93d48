// Charts as static SVG: Vega-Lite specs compiled to Vega and rendered
// headless (the same approach as the simulator's report).
import * as fs from 'node:fs';
import * as vega from 'vega';
import * as vl from 'vega-lite';
import type { TopLevelSpec } from 'vega-lite';

const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';
type Row = Record<string, string | number | null>;

export async function renderSvg(spec: TopLevelSpec, file: string): Promise<void> {
  const view = new vega.View(vega.parse(vl.compile(spec).spec), { renderer: 'none' });
  fs.writeFileSync(file, await view.toSVG());
  view.finalize();
}

const base = (
  title: string,
  width = 560,
  height = 260,
): Pick<TopLevelSpec, '$schema'> & Record<string, unknown> => ({
  $schema: SCHEMA,
  title,
  width,
  height,
  background: 'white',
  config: {
    font: 'Helvetica, Arial, sans-serif',
    axis: { labelLimit: 320 },
    legend: { orient: 'bottom', columns: 2, labelLimit: 300 },
  },
});

/** Step lines of a cumulative quantity over time, one colour per series. */
export function lineChart(
  title: string,
  rows: Row[],
  x: { field: string; title: string },
  y: { field: string; title: string; scale?: 'linear' | 'symlog' },
  extra: { rule?: number; ruleLabel?: string } = {},
): TopLevelSpec {
  const line = {
    mark: { type: 'line', interpolate: 'step-after' },
    encoding: {
      x: { field: x.field, type: 'quantitative', title: x.title },
      y: { field: y.field, type: 'quantitative', title: y.title, scale: { type: y.scale ?? 'linear' } },
      color: { field: 'series', type: 'nominal', title: null },
    },
  };
  const layers: unknown[] = [line];
  if (extra.rule !== undefined) {
    layers.push({
      data: { values: [{ v: extra.rule, label: extra.ruleLabel ?? '' }] },
      layer: [
        {
          mark: { type: 'rule', strokeDash: [4, 4], color: 'gray' },
          encoding: { x: { field: 'v', type: 'quantitative' } },
        },
        {
          mark: { type: 'text', align: 'left', dx: 4, dy: -110, color: 'gray' },
          encoding: { x: { field: 'v', type: 'quantitative' }, text: { field: 'label' } },
        },
      ],
    });
  }
  return { ...base(title), data: { values: rows }, layer: layers } as TopLevelSpec;
}

/** Empirical CDF of latencies per series. */
export function ecdfChart(
  title: string,
  samples: Record<string, number[]>,
  xTitle: string,
  totals: Record<string, number> = {},
  yTitle = 'fraction of nodes routed',
): TopLevelSpec {
  const rows: Row[] = [];
  for (const [series, values] of Object.entries(samples)) {
    const v = [...values].sort((a, b) => a - b);
    // Nodes that never got a route keep the curve below 1.
    const total = Math.max(totals[series] ?? v.length, v.length);
    v.forEach((x, i) => rows.push({ series, x, f: (i + 1) / total }));
  }
  return {
    ...base(title),
    data: { values: rows },
    mark: { type: 'line', interpolate: 'step-after' },
    encoding: {
      x: { field: 'x', type: 'quantitative', title: xTitle },
      y: { field: 'f', type: 'quantitative', title: yTitle, scale: { domain: [0, 1] } },
      color: { field: 'series', type: 'nominal', title: null },
    },
  } as TopLevelSpec;
}

/** Horizontal bars with the value printed, grouped by `group` (colour). */
export function barChart(
  title: string,
  rows: Row[],
  value: { field: string; title: string; scale?: 'linear' | 'symlog' },
  category: string,
  group?: string,
): TopLevelSpec {
  const y = { field: category, type: 'nominal', title: null, sort: null };
  const enc = {
    y,
    x: {
      field: value.field,
      type: 'quantitative',
      title: value.title,
      scale: { type: value.scale ?? 'linear' },
    },
    ...(group ? { yOffset: { field: group }, color: { field: group, type: 'nominal', title: null } } : {}),
  };
  return {
    ...base(title, 520, group ? 60 * new Set(rows.map((r) => r[category])).size : 22 * rows.length),
    data: { values: rows },
    layer: [
      { mark: 'bar', encoding: enc },
      {
        mark: { type: 'text', align: 'left', dx: 3 },
        encoding: { ...enc, text: { field: value.field, type: 'quantitative', format: ',.4~r' } },
      },
    ],
  } as TopLevelSpec;
}

/** Dots per sample, one row per series (small samples such as the single nodes). */
export function stripChart(title: string, samples: Record<string, number[]>, xTitle: string): TopLevelSpec {
  const rows: Row[] = [];
  for (const [series, values] of Object.entries(samples)) for (const x of values) rows.push({ series, x });
  return {
    ...base(title, 520, 30 * Object.keys(samples).length),
    data: { values: rows },
    mark: { type: 'tick', thickness: 2 },
    encoding: {
      x: { field: 'x', type: 'quantitative', title: xTitle },
      y: { field: 'series', type: 'nominal', title: null, sort: null },
      color: { field: 'series', type: 'nominal', legend: null },
    },
  } as TopLevelSpec;
}

/** Lines over node count, log-free; points marked. */
export function scalingChart(title: string, rows: Row[], yTitle: string): TopLevelSpec {
  return {
    ...base(title),
    data: { values: rows },
    mark: { type: 'line', point: true },
    encoding: {
      x: { field: 'nodes', type: 'quantitative', title: 'nodes (dual-stack: 2 routes each)' },
      y: { field: 'ms', type: 'quantitative', title: yTitle },
      color: { field: 'series', type: 'nominal', title: null },
    },
  } as TopLevelSpec;
}
