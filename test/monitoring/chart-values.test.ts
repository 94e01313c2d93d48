/**
 * The chart's defaults and values that fit a routes-based cluster (SPEC R135), rendered by the real
 * helm (scripts/monitoring-tools.sh): host network with the node's resolver, a secure port that is
 * not the CCM's, placement and pull values, the standard labels, values.schema.json, and the
 * ServiceMonitor's token. The chart's PrometheusRule naming the release's Lease is in
 * chart.test.ts; the deploy suite installs these defaults (test/deploy).
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { parse } from 'yaml';
import { parseFlags } from '../../src/cli/flags.ts';
import { CASES, CHART, deploymentArgs, key, render, requireTools, run, type Obj } from './chart-support.ts';

function podSpec(objs: Obj[]): Obj {
  const dep = objs.find((o) => o['kind'] === 'Deployment')!;
  return ((dep['spec'] as Obj)['template'] as { spec: Obj }).spec;
}

function podTemplateMetadata(objs: Obj[]): { labels: Record<string, string>; annotations?: Obj } {
  const dep = objs.find((o) => o['kind'] === 'Deployment')!;
  return ((dep['spec'] as Obj)['template'] as { metadata: { labels: Record<string, string> } }).metadata;
}

describe("the chart's defaults and values (R135)", { timeout: 300_000 }, () => {
  test('defaults fit a routes-based cluster: host network, the node resolver, a port that is not the CCM 10258', (t) => {
    const tl = requireTools(t);
    if (!tl) return;
    const objs = render(tl, CASES[0]!);
    const spec = podSpec(objs) as { hostNetwork?: boolean; dnsPolicy?: string; containers: Obj[] };
    assert.equal(spec.hostNetwork, true);
    assert.equal(spec.dnsPolicy, 'Default');
    const args = deploymentArgs(objs);
    const port = parseFlags(args.slice(1)).flags.serving.securePort;
    assert.equal(port, 10272);
    assert.notEqual(port, 10258, "the cloud-controller-manager's port");
    assert.deepEqual(spec.containers[0]!['ports'], [{ name: 'https', containerPort: 10272 }]);
    for (const k of ['nodeSelector', 'imagePullSecrets'])
      assert.equal(spec[k as keyof typeof spec], undefined, k);
    assert.equal(podTemplateMetadata(objs).annotations, undefined);
  });

  test('hostNetwork=false: the pod network and the cluster DNS (no dnsPolicy)', (t) => {
    const tl = requireTools(t);
    if (!tl) return;
    const spec = podSpec(
      render(
        tl,
        CASES.find((c) => c.name.startsWith('pod network'))!,
      ),
    );
    assert.equal(spec['hostNetwork'], undefined);
    assert.equal(spec['dnsPolicy'], undefined);
  });

  test('nodeSelector, imagePullSecrets and podAnnotations reach the pod', (t) => {
    const tl = requireTools(t);
    if (!tl) return;
    const objs = render(
      tl,
      CASES.find((c) => c.name.startsWith('pod network'))!,
    );
    const spec = podSpec(objs);
    assert.deepEqual(spec['nodeSelector'], { 'node-role.kubernetes.io/control-plane': '' });
    assert.deepEqual(spec['imagePullSecrets'], [{ name: 'registry-a' }, { name: 'registry-b' }]);
    assert.deepEqual(podTemplateMetadata(objs).annotations, { 'example.com/scrape': 'false' });
  });

  test('every object carries the standard instance and version labels; the selector stays the name', (t) => {
    const tl = requireTools(t);
    if (!tl) return;
    const chart = parse(fs.readFileSync(path.join(CHART, 'Chart.yaml'), 'utf8')) as { appVersion: string };
    for (const c of CASES) {
      const objs = render(tl, c);
      for (const o of objs) {
        const labels = (o['metadata'] as { labels?: Record<string, string> }).labels ?? {};
        assert.equal(labels['app.kubernetes.io/instance'], c.release, `${c.name}: ${key(o)}`);
        assert.equal(labels['app.kubernetes.io/version'], chart.appVersion, `${c.name}: ${key(o)}`);
      }
      const pod = podTemplateMetadata(objs).labels;
      assert.equal(pod['app.kubernetes.io/instance'], c.release, c.name);
      const dep = objs.find((o) => o['kind'] === 'Deployment')!;
      const selector = ((dep['spec'] as Obj)['selector'] as { matchLabels: Obj }).matchLabels;
      assert.deepEqual(Object.keys(selector), ['app.kubernetes.io/name'], `${c.name}: selector unchanged`);
    }
  });

  test('a wrong-typed value fails helm template and helm lint with a schema error', (t) => {
    const tl = requireTools(t);
    if (!tl) return;
    const bad: [string[], RegExp][] = [
      [['--set', 'replicas=two'], /replicas/],
      [['--set-string', 'metrics.securePort=10272'], /securePort/],
      [['--set', 'hostNetwork=maybe'], /hostNetwork/],
      [['--set-json', 'nodeSelector={"zone":1}'], /nodeSelector/],
      [['--set-json', 'imagePullSecrets=[{"name":"a"}]'], /imagePullSecrets/],
      [['--set', 'logFormat=xml'], /logFormat/],
    ];
    for (const [args, field] of bad) {
      for (const cmd of [
        ['template', 'r', CHART],
        ['lint', CHART],
      ]) {
        assert.throws(
          () => run(tl.helm, [...cmd, ...args]),
          (e: Error) => /schema/.test(e.message) && field.test(e.message),
          `helm ${cmd[0]!} ${args.join(' ')}: a schema error naming the value`,
        );
      }
    }
    // The same values with the right types render.
    run(tl.helm, ['template', 'r', CHART, '--set', 'replicas=3', '--set', 'metrics.securePort=10300']);
  });

  test("the ServiceMonitor presents a token through `authorization` (not bearerTokenFile): the chart's scraper account, or a Secret of one's own", (t) => {
    const tl = requireTools(t);
    if (!tl) return;
    const endpoint = (objs: Obj[]): Obj =>
      ((objs.find((o) => o['kind'] === 'ServiceMonitor')!['spec'] as Obj)['endpoints'] as Obj[])[0]!;
    const own = render(tl, CASES[2]!);
    const ep = endpoint(own);
    assert.equal(ep['bearerTokenFile'], undefined);
    const secret = 'routes-cloud-route-controller-metrics-scraper-token';
    assert.deepEqual(ep['authorization'], { type: 'Bearer', credentials: { name: secret, key: 'token' } });
    const token = own.find((o) => key(o) === `Secret networking/${secret}`)!;
    assert.equal(token['type'], 'kubernetes.io/service-account-token');
    const sa = 'routes-cloud-route-controller-metrics-scraper';
    assert.deepEqual((token['metadata'] as { annotations: Obj }).annotations, {
      'kubernetes.io/service-account.name': sa,
    });
    assert.ok(own.some((o) => key(o) === `ServiceAccount networking/${sa}`));
    const binding = own.find((o) => key(o) === `ClusterRoleBinding /${sa}`)!;
    assert.deepEqual(binding['roleRef'], {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'ClusterRole',
      name: 'routes-cloud-route-controller-metrics-reader',
    });
    assert.deepEqual(binding['subjects'], [{ kind: 'ServiceAccount', name: sa, namespace: 'networking' }]);

    const given = render(
      tl,
      CASES.find((c) => c.name.startsWith('pod network'))!,
    );
    assert.deepEqual(endpoint(given)['authorization'], {
      type: 'Bearer',
      credentials: { name: 'prometheus-token', key: 'bearer' },
    });
    assert.ok(!given.some((o) => key(o).includes('metrics-scraper')), 'no scraper account of its own');
  });
});
