// The docs check (a Kubernetes-style hack/verify step): a doc that names a
// flag, SPEC rule, file or metric that does not exist, an RBAC table or a list
// of providers that differs from the code, a generated part that is stale, or a
// table too wide to read, is a failure with its file and line.
import * as path from 'node:path';
import { FLAGS } from '../../src/cli/flag-table.ts';
import { CCM_IGNORED_FLAGS } from '../../src/cli/ccm-flags.ts';
import { registerBuiltinProviders } from '../../src/cloud/builtin.ts';
import { registeredCloudProviders } from '../../src/cloud/registry.ts';
import { allMetricNames, filesWithBlocks, GEN_COMMAND, regenerate } from './generate.ts';
import { chartRules, rbacRules, ruleKey } from './rbac.ts';
import type { DocTree } from './tree.ts';

export interface Problem {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

/** Widest table row allowed in README.md and docs/ (docs/SPEC.md aside). */
export const MAX_TABLE_WIDTH = 160;
const WIDTH_EXEMPT = new Set(['docs/SPEC.md']);
const CHART_RBAC = 'charts/cloud-route-controller/templates/rbac.yaml';

/** Flags of the project's other programs, read from their usage texts and flag definitions. */
const PROGRAMS = [
  'src/sim/cli.ts',
  'bench/run.ts',
  'bench/report.ts',
  'bench/image-facts.ts',
  'bench/import-peak.ts',
  'test/soak/soak.ts',
  'scripts/informer-memory.ts',
  'bench/peer/ts-route.ts',
  'bench/upstream/main.go',
];

/**
 * Flags of other tools the docs show in commands (node, kubectl, helm, az, podman, kwok, npm…):
 * not this project's to define. A flag of the daemon is never here.
 */
const FOREIGN_FLAGS = new Set(
  (
    'test expose-gc max-semi-space-size optimize-for-size single-threaded-gc semi-space-growth-factor max-heap-size ' + // node, V8
    'set namespace clusterrole serviceaccount prefix role subject pull network config node-lease-duration-seconds ' + // kubectl, helm, podman, kwok
    'name resource-group scope role-definition assignee identity-name issuer audience query server-address ' + // az
    'allocate-node-cidrs watch-progress-notify-interval no-source-dest-check router-route include cpu ' + // kcm, etcd, aws, openstack, grep, stress-ng
    'build-arg target flag no-atomic manage-all-nodes route-table-id destination-ipv6-cidr-block field-selector page-size'
  ) // podman, kwok, serve.py, aws CLI, kubectl
    .split(' '),
);

function lines(text: string): string[] {
  return text.split('\n');
}

async function programFlags(tree: DocTree): Promise<Set<string>> {
  const out = new Set<string>();
  for (const f of PROGRAMS) {
    if (!tree.exists(f)) continue;
    const text = tree.read(f);
    for (const m of text.matchAll(/^\s+(?:-\w, )?--([a-z][a-z0-9-]*)/gm)) out.add(m[1]!);
    for (const m of text.matchAll(/flag\.\w+Var\(&[\w.]+, "([a-z0-9-]+)"/g)) out.add(m[1]!);
    for (const m of text.matchAll(/^\s+'?([a-z][a-z0-9-]*)'?: \{ type: '(?:string|boolean)'/gm))
      out.add(m[1]!);
  }
  return out;
}

async function checkFlags(tree: DocTree, docs: readonly string[]): Promise<Problem[]> {
  const known = new Set([
    ...FLAGS.map((f) => f.name),
    // A CCM's other flags: the daemon accepts them and logs them as ignored (R120).
    ...Object.keys(CCM_IGNORED_FLAGS),
    ...(await programFlags(tree)),
    ...FOREIGN_FLAGS,
  ]);
  const out: Problem[] = [];
  for (const file of docs) {
    lines(tree.read(file)).forEach((l, i) => {
      for (const m of l.matchAll(/(?<![\w-])--([a-z][a-z0-9]*(?:-[a-z0-9]+)*)/g)) {
        if (!known.has(m[1]!))
          out.push({
            file,
            line: i + 1,
            message: `flag --${m[1]} is not in src/cli/flag-table.ts (nor a flag of another program the docs run)`,
          });
      }
    });
  }
  return out;
}

export function definedRules(spec: string): Set<number> {
  return new Set([...spec.matchAll(/\*\*R(\d+)\*\*/g)].map((m) => Number(m[1])));
}

async function checkRules(tree: DocTree, docs: readonly string[]): Promise<Problem[]> {
  const defined = definedRules(tree.read('docs/SPEC.md'));
  const code = tree.sources(
    ['src', 'test', 'bench', 'scripts', 'examples', 'deploy', 'charts'],
    ['.ts', '.js', '.go', '.yaml', '.sh'],
  );
  const out: Problem[] = [];
  for (const file of [...docs, ...code]) {
    lines(tree.read(file)).forEach((l, i) => {
      for (const m of l.matchAll(/(?<![\w./-])R(\d{1,3})(?![\w])/g)) {
        if (!defined.has(Number(m[1])))
          out.push({ file, line: i + 1, message: `rule R${m[1]} is not defined in docs/SPEC.md` });
      }
    });
  }
  return out;
}

const TOP =
  /^(?:src|test|bench|docs|scripts|deploy|charts|examples|bin|testenv|\.ci)\/|^(?:README|SECURITY)\.md$|^Dockerfile$|^package\.json$/;
/** Written by a run, not committed. */
const OUTPUTS = /^(?:bench\/out|dist|dist-image|flake-hunt)\//;

function checkPaths(tree: DocTree, docs: readonly string[]): Problem[] {
  const out: Problem[] = [];
  for (const file of docs) {
    let fence = false;
    lines(tree.read(file)).forEach((l, i) => {
      if (/^\s*```/.test(l)) fence = !fence;
      const named: string[] = [];
      for (const m of l.matchAll(/`([^`\s]+)`/g)) if (!fence) named.push(m[1]!);
      for (const m of l.matchAll(/\]\(([^)\s#]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/.test(m[1]!)) continue;
        named.push(path.posix.normalize(path.posix.join(path.posix.dirname(file), m[1]!)));
      }
      for (const raw of named) {
        const p = raw.replace(/[:#].*$/, '').replace(/[.,;)]+$/, '');
        if (!TOP.test(p) || OUTPUTS.test(p) || /[*<>{}$…]|\.\.\.|=/.test(p)) continue;
        if (!tree.exists(p.replace(/\/$/, '')))
          out.push({ file, line: i + 1, message: `${p} does not exist` });
      }
    });
  }
  return out;
}

async function checkMetrics(tree: DocTree, docs: readonly string[]): Promise<Problem[]> {
  const names = await allMetricNames();
  const out: Problem[] = [];
  for (const file of docs) {
    lines(tree.read(file)).forEach((l, i) => {
      for (const m of l.matchAll(
        /(?<![\w])(route_controller_[a-z0-9_]*[a-z0-9]|workqueue_[a-z0-9_]*[a-z0-9]|running_managed_controllers|leader_election_master_status)(?![\w*])/g,
      )) {
        const base = m[1]!.replace(/_(bucket|sum|count)$/, '');
        if (!names.has(m[1]!) && !names.has(base))
          out.push({
            file,
            line: i + 1,
            message: `metric ${m[1]} is not registered (src/controller/metrics.ts)`,
          });
      }
    });
  }
  return out;
}

/** How the docs name each provider in prose. */
const PROVIDER_NAMES: Record<string, RegExp> = {
  aws: /\baws\b|\bAWS\b/,
  azure: /\bazure\b|\bAzure\b/,
  gce: /\bgce\b|\bGCE\b|Compute Engine/,
  hcloud: /\bhcloud\b|Hetzner/,
  linux: /\blinux\b|\bLinux\b/,
  openstack: /\bopenstack\b|OpenStack/,
  memory: /`memory`|in-memory|memory provider/,
};

/** Paragraphs and list items (a table row may name a subset: what one suite covers), each with its first line. */
function units(ls: readonly string[]): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let cur: string[] = [];
  let first = 0;
  const flush = (): void => {
    if (cur.length > 0) out.push({ line: first + 1, text: cur.join(' ') });
    cur = [];
  };
  ls.forEach((l, i) => {
    const blank = l.trim() === '' || /^(\||#)/.test(l);
    if (blank || /^\s*(?:[-*]|\d+\.) /.test(l)) flush();
    if (blank) return;
    if (cur.length === 0) first = i;
    cur.push(l);
  });
  flush();
  return out;
}

/** A paragraph naming four or more providers is a list of them: it must name every cloud (memory is optional). */
function checkProviderLists(tree: DocTree, docs: readonly string[]): Problem[] {
  registerBuiltinProviders();
  const builtin = registeredCloudProviders();
  const out: Problem[] = [];
  const unknown = Object.keys(PROVIDER_NAMES).filter((p) => !builtin.includes(p));
  const unnamed = builtin.filter((p) => PROVIDER_NAMES[p] === undefined);
  if (unknown.length + unnamed.length > 0)
    out.push({
      file: 'src/cloud/builtin.ts',
      line: 1,
      message: `the registry's providers (${builtin.join(', ')}) differ from the check's (${Object.keys(PROVIDER_NAMES).join(', ')})`,
    });
  for (const file of docs) {
    if (file === 'docs/SPEC.md' || file.startsWith('docs/providers/')) continue;
    for (const u of units(lines(tree.read(file)))) {
      const named = builtin.filter((p) => PROVIDER_NAMES[p]?.test(u.text));
      if (named.length < 4) continue;
      const missing = builtin.filter((p) => p !== 'memory' && !named.includes(p));
      if (missing.length > 0)
        out.push({
          file,
          line: u.line,
          message: `a list of providers (${named.join(', ')}) without ${missing.join(', ')}`,
        });
    }
  }
  return out;
}

/** Verbs per `group/resource`, the union over rules (SPEC §7.4's table lists one row per resource). */
function verbsByResource(
  rules: readonly { apiGroups: readonly string[]; resources: readonly string[]; verbs: readonly string[] }[],
): string {
  const m = new Map<string, Set<string>>();
  for (const r of rules)
    for (const g of r.apiGroups)
      for (const res of r.resources)
        for (const v of r.verbs) {
          const key = g === '' ? res : `${g}/${res}`;
          m.set(key, (m.get(key) ?? new Set()).add(v));
        }
  return [...m]
    .map(([k, v]) => `${k}: ${[...v].sort().join(',')}`)
    .sort()
    .join('; ');
}

/** SPEC §7.4's table: `| group | resource | verbs | why |` rows. */
function specRbac(spec: string): { line: number; text: string } {
  const ls = lines(spec);
  const start = ls.findIndex((l) => l.startsWith('### 7.4'));
  const rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] = [];
  for (let i = start + 1; i < ls.length && !ls[i]!.startsWith('#'); i++) {
    const c = ls[i]!.split('|').map((x) => x.trim());
    if (c.length < 5 || !c[1]!.startsWith('`')) continue;
    const unquote = (x: string): string => x.replace(/`/g, '').replace(/^""$/, '');
    rules.push({
      apiGroups: [unquote(c[1]!)],
      resources: [unquote(c[2]!)],
      verbs: c[3]!.split(',').map((v) => v.trim()),
    });
  }
  return { line: start + 1, text: verbsByResource(rules) };
}

function checkRbac(tree: DocTree): Problem[] {
  const out: Problem[] = [];
  const spec = specRbac(tree.read('docs/SPEC.md'));
  const deployed = verbsByResource(rbacRules(tree.read('deploy/base/rbac.yaml')));
  if (spec.text !== deployed)
    out.push({
      file: 'docs/SPEC.md',
      line: spec.line,
      message: `§7.4 grants ${spec.text}; deploy/base/rbac.yaml grants ${deployed}`,
    });
  return [...out, ...checkChartRbac(tree)];
}

function checkChartRbac(tree: DocTree): Problem[] {
  const deploy = rbacRules(tree.read('deploy/base/rbac.yaml')).map(ruleKey).sort();
  const chart = chartRules(tree.read(CHART_RBAC)).sort();
  if (JSON.stringify(deploy) === JSON.stringify(chart)) return [];
  const only = (a: string[], b: string[]): string => a.filter((x) => !b.includes(x)).join('; ') || 'nothing';
  return [
    {
      file: CHART_RBAC,
      line: 1,
      message: `RBAC rules differ from deploy/base/rbac.yaml: only in the chart: ${only(chart, deploy)}; only in deploy/: ${only(deploy, chart)}`,
    },
  ];
}

function checkTableWidths(tree: DocTree, docs: readonly string[]): Problem[] {
  const out: Problem[] = [];
  for (const file of docs) {
    if (WIDTH_EXEMPT.has(file) || !(file === 'README.md' || file.startsWith('docs/'))) continue;
    let reported = false; // once per table: Prettier pads every row of a table to the same width
    lines(tree.read(file)).forEach((l, i) => {
      if (!l.trimStart().startsWith('|')) reported = false;
      else if (!reported && [...l].length > MAX_TABLE_WIDTH) {
        reported = true;
        out.push({
          file,
          line: i + 1,
          message: `table ${[...l].length} characters wide (at most ${MAX_TABLE_WIDTH}): move the detail out of the table`,
        });
      }
    });
  }
  return out;
}

async function checkGenerated(tree: DocTree): Promise<Problem[]> {
  const out: Problem[] = [];
  for (const file of filesWithBlocks(tree)) {
    const { text, unknown } = await regenerate(tree, file);
    for (const u of unknown) out.push({ file, line: 1, message: `unknown generated block "${u}"` });
    if (text !== tree.read(file))
      out.push({ file, line: 1, message: `generated parts are stale: run \`${GEN_COMMAND}\`` });
  }
  return out;
}

export async function verifyDocs(tree: DocTree): Promise<Problem[]> {
  const docs = tree.markdown();
  return [
    ...(await checkGenerated(tree)),
    ...(await checkFlags(tree, docs)),
    ...(await checkRules(tree, docs)),
    ...checkPaths(tree, docs),
    ...(await checkMetrics(tree, docs)),
    ...checkProviderLists(tree, docs),
    ...checkRbac(tree),
    ...checkTableWidths(tree, docs),
  ];
}
