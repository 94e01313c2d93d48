/**
 * The Helm chart, the kustomizations and the alerts with the real tools (built by
 * scripts/monitoring-tools.sh): helm lint and template, kustomize build, every rendered object
 * applied with a server-side dry run to a real kube-apiserver that knows the Prometheus operator's
 * CRDs, promtool check and test rules. The secure /metrics scrape and the metric names the alerts
 * and the dashboard query are in test/integration/secure-serving.test.ts.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse, stringify } from 'yaml';
import { parseFlags } from '../../src/cli/flags.ts';
import { apiRequest, requireTestenv, startControlPlane, testenvBinaries } from '../support/controlplane.ts';
import type { ControlPlane } from '../support/controlplane.ts';
import { ROOT } from '../e2e/support.ts';
import {
  CASES,
  CHART,
  FILES,
  TOOLS,
  deploymentArgs,
  docs,
  key,
  normalize,
  render,
  requireTools,
  run,
  type Obj,
} from './chart-support.ts';

describe('Helm chart and kustomizations', { timeout: 300_000 }, () => {
  test('helm lint passes for every value combination', (t) => {
    const tl = requireTools(t);
    if (!tl) return;
    for (const c of CASES) {
      const out = run(tl.helm, ['lint', CHART, '--strict', '--namespace', c.namespace, ...c.args]);
      assert.match(out, /1 chart\(s\) linted, 0 chart\(s\) failed/, c.name);
    }
  });

  test('provider linux is refused with the reason (it runs on the router, not from this chart)', (t) => {
    const tl = requireTools(t);
    if (!tl) return;
    assert.throws(
      () => run(tl.helm, ['template', 'r', CHART, '--set', 'provider=linux']),
      /provider linux changes the routing table of the host it runs on: run it on the router/,
    );
  });

  test('the chart and the kustomizations render the same objects for the same choices', (t) => {
    const tl = requireTools(t);
    if (!tl) return;
    for (const c of CASES.filter((x) => x.kustomization !== undefined)) {
      const chart = normalize(render(tl, c));
      const kust = normalize(docs(run(tl.kustomize, ['build', path.join(ROOT, c.kustomization!)])));
      assert.deepEqual([...chart.keys()].sort(), [...kust.keys()].sort(), c.name);
      for (const [k, o] of chart) assert.deepEqual(o, kust.get(k), `${c.name}: ${k}`);
    }
  });

  test('every rendering runs the daemon with valid flags, its Lease in the Role, probes always allowed', (t) => {
    const tl = requireTools(t);
    if (!tl) return;
    for (const c of CASES) {
      const objs = render(tl, c);
      const args = deploymentArgs(objs);
      assert.equal(args[0], 'run', c.name);
      const parsed = parseFlags(args.slice(1));
      assert.deepEqual(parsed.errors, [], c.name);
      assert.equal(parsed.flags.resourceNamespace, c.namespace, c.name);
      const role = objs.find((o) => o['kind'] === 'Role')!;
      const names = (role['rules'] as { resourceNames?: string[] }[]).flatMap((r) => r.resourceNames ?? []);
      assert.deepEqual(names, [parsed.flags.resourceName], c.name);
      const kinds = objs.map((o) => String(o['kind']));
      assert.equal(kinds.includes('ServiceMonitor'), c.args.includes('serviceMonitor.enabled=true'), c.name);
      const secure = parsed.flags.serving.securePort !== 0;
      assert.equal(
        objs.some((o) => (o['metadata'] as { name: string }).name.endsWith(':auth-delegator')),
        secure,
        `${c.name}: system:auth-delegator exactly when the secure port is on`,
      );
    }
  });

  test('openstack: the cloud-config Secret is mounted whole where cloud.conf names its files; extra volumes are mounted', (t) => {
    const tl = requireTools(t);
    if (!tl) return;
    const objs = render(
      tl,
      CASES.find((c) => c.name.startsWith('openstack'))!,
    );
    assert.ok(
      !objs.some((o) => o['kind'] === 'ConfigMap' && key(o).endsWith('-config')),
      'no ConfigMap for the config',
    );
    const args = deploymentArgs(objs);
    assert.ok(args.includes('--cloud-provider=openstack'));
    assert.ok(args.includes('--cloud-config=/etc/config/cloud.conf'), args.join(' '));
    const dep = objs.find((o) => o['kind'] === 'Deployment')!;
    const pod = ((dep['spec'] as Obj)['template'] as { spec: Obj }).spec as {
      volumes: { name: string; secret?: { secretName: string; items?: unknown } }[];
      containers: { volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[] }[];
    };
    const config = pod.volumes.find((v) => v.name === 'cloud-config')!;
    assert.deepEqual(
      config.secret,
      { secretName: 'cloud-config' },
      'every key (cloud.conf, ca.crt, clouds.yaml)',
    );
    assert.deepEqual(
      pod.volumes.find((v) => v.name === 'openstack-ca'),
      { name: 'openstack-ca', secret: { secretName: 'openstack-ca' } },
    );
    const mounts = pod.containers[0]!.volumeMounts;
    assert.deepEqual(
      mounts.find((m) => m.name === 'cloud-config'),
      { name: 'cloud-config', mountPath: '/etc/config', readOnly: true },
    );
    assert.deepEqual(
      mounts.find((m) => m.name === 'openstack-ca'),
      { name: 'openstack-ca', mountPath: '/etc/openstack-ca', readOnly: true },
    );
    // The defaults keep the single file at the old path.
    const defaults = render(tl, CASES[0]!);
    assert.ok(deploymentArgs(defaults).includes('--cloud-config=/etc/cloud-route-controller/cloud.yaml'));
  });

  test("the PrometheusRule carries files/alerts.yaml with the release's Lease name, the dashboard ConfigMap files/ unchanged", (t) => {
    const tl = requireTools(t);
    if (!tl) return;
    const objs = render(tl, CASES[2]!);
    const rule = objs.find((o) => o['kind'] === 'PrometheusRule')!;
    // The Lease name is the release's (routes-cloud-route-controller), the rest files/alerts.yaml.
    const lease = parseFlags(deploymentArgs(objs).slice(1)).flags.resourceName;
    assert.equal(lease, 'routes-cloud-route-controller');
    const source = fs.readFileSync(path.join(FILES, 'alerts.yaml'), 'utf8');
    assert.deepEqual(
      rule['spec'],
      parse(source.replaceAll('name="cloud-route-controller"', `name="${lease}"`)),
    );
    const exprs = (rule['spec'] as { groups: { rules: { alert: string; expr: string }[] }[] }).groups
      .flatMap((g) => g.rules)
      .filter((r) => r.expr.includes('leader_election_master_status'));
    assert.deepEqual(exprs.map((r) => r.alert).sort(), [
      'CloudRouteControllerAbsent',
      'CloudRouteControllerNoLeader',
    ]);
    for (const r of exprs) {
      assert.ok(r.expr.includes(`name="${lease}"`), `${r.alert}: ${r.expr}`);
      assert.ok(!r.expr.includes('name="cloud-route-controller"'), `${r.alert}: the default release's Lease`);
    }
    const defaults = render(tl, CASES[1]!).find((o) => o['kind'] === 'PrometheusRule')!;
    assert.deepEqual(defaults['spec'], parse(source), 'the default release: files/alerts.yaml unchanged');
    const cm = objs.find((o) => key(o) === 'ConfigMap networking/routes-cloud-route-controller-dashboard')!;
    const json = (cm['data'] as Record<string, string>)['cloud-route-controller.json']!;
    assert.deepEqual(
      JSON.parse(json),
      JSON.parse(fs.readFileSync(path.join(FILES, 'dashboard.json'), 'utf8')),
    );
    assert.equal(((cm['metadata'] as Obj)['labels'] as Obj)['grafana_dashboard'], '1');
  });

  test('promtool: the rules are valid and every alert has a unit test that fires it', (t) => {
    const tl = requireTools(t);
    if (!tl) return;
    assert.match(run(tl.promtool, ['check', 'rules', 'alerts.yaml'], FILES), /SUCCESS: 9 rules found/);
    assert.match(run(tl.promtool, ['test', 'rules', 'alerts.test.yaml'], FILES), /SUCCESS/);
    const alerts = (
      parse(fs.readFileSync(path.join(FILES, 'alerts.yaml'), 'utf8')) as {
        groups: { rules: { alert: string }[] }[];
      }
    ).groups.flatMap((g) => g.rules.map((r) => r.alert));
    const tests = parse(fs.readFileSync(path.join(FILES, 'alerts.test.yaml'), 'utf8')) as {
      tests: { alert_rule_test: { alertname: string; exp_alerts: unknown[] }[] }[];
    };
    const fired = new Set(
      tests.tests.flatMap((x) =>
        x.alert_rule_test.filter((a) => a.exp_alerts.length > 0).map((a) => a.alertname),
      ),
    );
    const silent = new Set(
      tests.tests.flatMap((x) =>
        x.alert_rule_test.filter((a) => a.exp_alerts.length === 0).map((a) => a.alertname),
      ),
    );
    for (const a of alerts) {
      assert.ok(fired.has(a), `${a}: no unit test where it fires`);
      assert.ok(silent.has(a), `${a}: no unit test where it stays silent`);
    }
    const runbooks = fs.readFileSync(path.join(ROOT, 'docs', 'monitoring.md'), 'utf8');
    for (const a of alerts) assert.match(runbooks, new RegExp(`^### ${a}$`, 'm'), `${a}: no runbook section`);
  });
});

describe('server-side dry run of every rendered object', { timeout: 300_000 }, () => {
  const enabled = testenvBinaries() !== undefined && TOOLS !== undefined;
  let cp: ControlPlane | undefined;

  before(async () => {
    if (!enabled) return;
    cp = await startControlPlane();
    for (const f of fs.readdirSync(TOOLS!.crds).filter((x) => x.endsWith('.yaml'))) {
      for (const crd of docs(fs.readFileSync(path.join(TOOLS!.crds, f), 'utf8'))) {
        const r = await apiRequest(
          cp.adminKubeconfig,
          'POST',
          '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
          crd,
        );
        assert.ok(r.status === 201 || r.status === 409, `${f}: ${r.status} ${r.body.slice(0, 500)}`);
        const name = (crd['metadata'] as { name: string }).name;
        const deadline = Date.now() + 30_000;
        for (;;) {
          const g = await apiRequest(
            cp.adminKubeconfig,
            'GET',
            `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
          );
          const conds = (
            JSON.parse(g.body) as { status?: { conditions?: { type: string; status: string }[] } }
          ).status?.conditions;
          if (conds?.some((c) => c.type === 'Established' && c.status === 'True')) break;
          assert.ok(Date.now() < deadline, `${name} not Established`);
          await new Promise((res) => setTimeout(res, 200));
        }
        // Discovery (what resourceFor reads) follows Established asynchronously: wait for it too.
        const spec = crd['spec'] as {
          group: string;
          names: { kind: string };
          versions: { name: string; served: boolean }[];
        };
        for (const v of spec.versions.filter((x) => x.served)) {
          for (;;) {
            const d = await apiRequest(cp.adminKubeconfig, 'GET', `/apis/${spec.group}/${v.name}`);
            const kinds =
              d.status === 200 ? (JSON.parse(d.body) as { resources: { kind: string }[] }).resources : [];
            if (kinds.some((x) => x.kind === spec.names.kind)) break;
            assert.ok(Date.now() < deadline, `${name} ${v.name} not in discovery`);
            await new Promise((res) => setTimeout(res, 200));
          }
        }
      }
    }
    for (const ns of new Set(CASES.map((c) => c.namespace))) {
      const r = await apiRequest(cp.adminKubeconfig, 'POST', '/api/v1/namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: ns },
      });
      assert.ok(r.status === 201 || r.status === 409, `namespace ${ns}: ${r.status} ${r.body}`);
    }
  });
  after(async () => {
    await cp?.stop();
  });

  const plural = new Map<string, { name: string; namespaced: boolean }>();
  async function resourceFor(
    apiVersion: string,
    kind: string,
  ): Promise<{ name: string; namespaced: boolean }> {
    const k = `${apiVersion} ${kind}`;
    const known = plural.get(k);
    if (known) return known;
    const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const r = await apiRequest(cp!.adminKubeconfig, 'GET', base);
    assert.equal(r.status, 200, `discovery ${base}: ${r.body}`);
    const res = (
      JSON.parse(r.body) as { resources: { name: string; kind: string; namespaced: boolean }[] }
    ).resources.find((x) => x.kind === kind && !x.name.includes('/'));
    assert.ok(res, `the apiserver serves no ${apiVersion} ${kind}`);
    plural.set(k, res);
    return res;
  }

  for (const c of CASES) {
    test(`chart (${c.name}): every object passes a server-side dry-run apply`, async (t) => {
      if (!enabled || !cp) {
        requireTestenv(t);
        requireTools(t);
        return;
      }
      const objs = render(TOOLS!, c);
      assert.ok(objs.length >= 8, `${objs.length} objects`);
      for (const o of objs) {
        const apiVersion = String(o['apiVersion']);
        const md = o['metadata'] as { name: string; namespace?: string };
        const res = await resourceFor(apiVersion, String(o['kind']));
        const group = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
        const ns = res.namespaced ? `/namespaces/${md.namespace ?? c.namespace}` : '';
        const url = `${group}${ns}/${res.name}/${encodeURIComponent(md.name)}`;
        const r = await apiRequest(
          cp.adminKubeconfig,
          'PATCH',
          `${url}?dryRun=All&fieldManager=chart-test&fieldValidation=Strict`,
          stringify(o),
          'application/apply-patch+yaml',
        );
        assert.ok(r.status === 200 || r.status === 201, `${key(o)}: HTTP ${r.status} ${r.body}`);
        const get = await apiRequest(cp.adminKubeconfig, 'GET', url);
        assert.equal(get.status, 404, `${key(o)} must not exist after a dry run`);
      }
      t.diagnostic(`${objs.length} objects accepted`);
    });
  }
});
