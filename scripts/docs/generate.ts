// The parts of the docs that mirror code, written between marker comments
//   <!-- generated:NAME -->  …  <!-- /generated:NAME -->
// from the code itself: the daemon's flags (src/cli/flag-table.ts), the
// metrics (what RouteControllerMetrics registers) and the RBAC rules
// (deploy/base/rbac.yaml, with its comments as the reasons). `npm run docs:gen`
// rewrites them; `npm run docs:verify` fails when one is stale.
import { collectDefaultMetrics, Registry } from 'prom-client';
import * as prettier from 'prettier';
import { FLAGS, PROJECT_FLAGS } from '../../src/cli/flag-table.ts';
import { RouteControllerMetrics } from '../../src/controller/metrics.ts';
import { rbacRules } from './rbac.ts';
import type { DocTree } from './tree.ts';

export const GEN_COMMAND = 'npm run docs:gen';

const BLOCK = /(<!-- generated:([a-z-]+) -->\n)([\s\S]*?)(<!-- \/generated:\2 -->)/g;

type Renderer = (tree: DocTree) => string;

const escapeCell = (s: string): string => s.replace(/\|/g, '\\|');

function flagsBlock(): string {
  const rows = FLAGS.map((f) => {
    const name = f.shorthand === undefined ? `\`--${f.name}\`` : `\`-${f.shorthand}\`, \`--${f.name}\``;
    const def = f.name === 'cloud-provider' ? 'required' : `\`${f.default === '' ? '""' : f.default}\``;
    return `| ${name}${PROJECT_FLAGS.has(f.name) ? ' \\*' : ''} | ${def} | ${f.kind} |`;
  });
  const meanings = FLAGS.map((f) => `- \`--${f.name}\`: ${f.help}`);
  return [
    '| Flag | Default | Kind |',
    '| --- | --- | --- |',
    ...rows,
    '',
    'What each does (the text of `--help`):',
    '',
    ...meanings,
  ].join('\n');
}

/** The metrics the daemon registers besides prom-client's default process and Node.js ones. */
export async function registeredMetrics(): Promise<
  { name: string; type: string; help: string; labels: string[] }[]
> {
  const registry = new Registry();
  new RouteControllerMetrics(registry);
  const json = await registry.getMetricsAsJSON();
  return json.map((m) => ({
    name: m.name,
    type: String(m.type),
    help: m.help,
    labels: [
      ...((registry.getSingleMetric(m.name) as unknown as { labelNames?: string[] }).labelNames ?? []),
    ],
  }));
}

/** Every metric name a scrape of the daemon can show (for the check of names in the docs). */
export async function allMetricNames(): Promise<Set<string>> {
  const registry = new Registry();
  new RouteControllerMetrics(registry);
  collectDefaultMetrics({ register: registry });
  const names = new Set((await registry.getMetricsAsJSON()).map((m) => m.name));
  registry.clear();
  return names;
}

async function metricsBlock(): Promise<string> {
  const ms = await registeredMetrics();
  return ms
    .map((m) => {
      const labels = m.labels.length === 0 ? '' : `; ${m.labels.map((l) => `\`${l}\``).join(', ')}`;
      return `- \`${m.name}\` (${m.type}${labels}): ${m.help}`;
    })
    .join('\n');
}

function rbacBlock(tree: DocTree): string {
  const rows = rbacRules(tree.read('deploy/base/rbac.yaml')).map((r) => {
    const groups = r.apiGroups.map((g) => (g === '' ? 'core' : g)).join(', ');
    const names = r.resourceNames.length === 0 ? '' : ` ${r.resourceNames.map((n) => `\`${n}\``).join(', ')}`;
    const resources = r.resources.map((x) => `\`${x}\``).join(', ');
    return `| ${resources} (${groups}) | ${r.kind} | ${r.verbs.join(', ')} | ${escapeCell(r.why).replace(/\.$/, '')}${names} |`;
  });
  return ['| Resource (API group) | In | Verbs | Why |', '| --- | --- | --- | --- |', ...rows].join('\n');
}

const RENDERERS: Record<string, Renderer | ((tree: DocTree) => Promise<string>)> = {
  flags: flagsBlock,
  metrics: metricsBlock,
  rbac: rbacBlock,
};

export const BLOCK_NAMES = Object.keys(RENDERERS);

/** The file's text with every generated block rewritten and the whole formatted as Prettier would. */
export async function regenerate(tree: DocTree, file: string): Promise<{ text: string; unknown: string[] }> {
  const text = tree.read(file);
  const wanted = new Map<string, string>();
  const unknown: string[] = [];
  for (const m of text.matchAll(BLOCK)) {
    const r = RENDERERS[m[2]!];
    if (r === undefined) unknown.push(m[2]!);
    else if (!wanted.has(m[2]!)) wanted.set(m[2]!, await r(tree));
  }
  if (wanted.size === 0) return { text, unknown };
  const replaced = text.replace(BLOCK, (all, open: string, name: string, _body: string, close: string) => {
    const body = wanted.get(name);
    return body === undefined ? all : `${open}\n${body}\n\n${close}`;
  });
  const options = (await prettier.resolveConfig(`${tree.root}/${file}`)) ?? {};
  return { text: await prettier.format(replaced, { ...options, parser: 'markdown' }), unknown };
}

/** The doc files that hold generated blocks. */
export function filesWithBlocks(tree: DocTree): string[] {
  return tree.markdown().filter((f) => /<!-- generated:[a-z-]+ -->/.test(tree.read(f)));
}
