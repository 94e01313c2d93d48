// The docs check catches each kind of drift: each case overrides one file of
// the checkout (in memory, the checkout untouched) and expects its problem.
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { verifyDocs, type Problem } from './checks.ts';
import { DocTree } from './tree.ts';

const ROOT = path.join(import.meta.dirname, '..', '..');
const base = new DocTree(ROOT);
// Built from parts so that this file itself cites no rule or metric that does not exist.
const NO_RULE = ['R', '999'].join('');
const NO_METRIC = ['route_controller', 'no_such_total'].join('_');

async function problemsWith(overlay: Record<string, string | null>): Promise<Problem[]> {
  return verifyDocs(new DocTree(ROOT, new Map(Object.entries(overlay))));
}

const appended = (file: string, text: string): Record<string, string> => ({
  [file]: `${base.read(file)}\n${text}\n`,
});

function assertCaught(problems: readonly Problem[], file: string, pattern: RegExp): void {
  const hit = problems.find((p) => p.file === file && pattern.test(p.message));
  assert.ok(
    hit,
    `no problem in ${file} matching ${pattern}; got:\n${problems.map((p) => `${p.file}:${p.line}: ${p.message}`).join('\n')}`,
  );
}

describe('docs check', () => {
  it('passes on the repository as committed', async () => {
    const problems = await verifyDocs(base);
    assert.deepEqual(
      problems.map((p) => `${p.file}:${p.line}: ${p.message}`),
      [],
    );
  });

  it('catches a flag the flag table does not have', async () => {
    assertCaught(
      await problemsWith(appended('docs/daemon.md', 'Set `--cloud-call-deadline=5s`.')),
      'docs/daemon.md',
      /flag --cloud-call-deadline/,
    );
  });

  it('catches a SPEC rule cited in docs that SPEC does not define', async () => {
    assertCaught(
      await problemsWith(appended('docs/reliability.md', `As ${NO_RULE} says.`)),
      'docs/reliability.md',
      new RegExp(`rule ${NO_RULE}`),
    );
  });

  it('catches a rule cited in code once SPEC drops it', async () => {
    const spec = base.read('docs/SPEC.md').replace('**R47**', '**R47x**');
    assertCaught(await problemsWith({ 'docs/SPEC.md': spec }), 'src/controller/executor.ts', /rule R47 /);
  });

  it('catches a file path that does not exist', async () => {
    assertCaught(
      await problemsWith(appended('README.md', 'See `src/core/no-such-file.ts`.')),
      'README.md',
      /src\/core\/no-such-file\.ts does not exist/,
    );
    assertCaught(
      await problemsWith(appended('docs/kwok.md', 'See [the plan](../src/core/gone.ts).')),
      'docs/kwok.md',
      /src\/core\/gone\.ts does not exist/,
    );
  });

  it('catches a metric that is not registered', async () => {
    assertCaught(
      await problemsWith(appended('docs/monitoring.md', `Watch \`${NO_METRIC}\`.`)),
      'docs/monitoring.md',
      new RegExp(`metric ${NO_METRIC}`),
    );
  });

  it('catches a list of providers that misses one of the registry', async () => {
    const list = 'Plug-ins for AWS, Azure, GCE, Hetzner Cloud and the Linux routing table.';
    assertCaught(await problemsWith(appended('docs/kwok.md', list)), 'docs/kwok.md', /without openstack/);
  });

  it('catches RBAC rules of the chart that differ from deploy/', async () => {
    const chart = 'charts/cloud-route-controller/templates/rbac.yaml';
    const text = base.read(chart).replace("verbs: ['list', 'watch']", "verbs: ['get', 'list', 'watch']");
    assert.notEqual(text, base.read(chart));
    assertCaught(
      await problemsWith({ [chart]: text }),
      chart,
      /only in the chart: ClusterRole \[\] \[nodes\] \[get,list,watch\]/,
    );
  });

  it("catches SPEC §7.4's RBAC table granting other verbs than deploy/", async () => {
    const spec = base
      .read('docs/SPEC.md')
      .replace('| `""` | `nodes` | list, watch |', '| `""` | `nodes` | get, list, watch |');
    assert.notEqual(spec, base.read('docs/SPEC.md'));
    assertCaught(
      await problemsWith({ 'docs/SPEC.md': spec }),
      'docs/SPEC.md',
      /§7\.4 grants .*\bnodes: get,list,watch;/,
    );
  });

  it('catches RBAC tables that no longer say what deploy/ grants (stale generated part)', async () => {
    const file = 'deploy/base/rbac.yaml';
    const text = base
      .read(file)
      .replace("verbs: ['create', 'patch']", "verbs: ['create', 'patch', 'update']");
    const problems = await problemsWith({ [file]: text });
    assertCaught(problems, 'SECURITY.md', /stale: run `npm run docs:gen`/);
    assertCaught(problems, 'docs/daemon.md', /stale: run `npm run docs:gen`/);
  });

  it('catches a hand edit of a generated part', async () => {
    const file = 'docs/monitoring.md';
    const text = base
      .read(file)
      .replace('`route_controller_route_sync_total` (counter', '`route_controller_route_sync_total` (gauge');
    assert.notEqual(text, base.read(file));
    assertCaught(await problemsWith({ [file]: text }), file, /stale: run `npm run docs:gen`/);
  });

  it('catches a table wider than 160 characters', async () => {
    const row = `| a | ${'x'.repeat(170)} |`;
    assertCaught(
      await problemsWith(appended('docs/kwok.md', `| h | i |\n| - | - |\n${row}`)),
      'docs/kwok.md',
      /table 178 characters wide/,
    );
  });
});
