/**
 * What the chart suite's files share (test/monitoring/chart.test.ts, chart-values.test.ts): the
 * tools scripts/monitoring-tools.sh built, the value combinations every test renders, and helpers
 * that read the rendered objects.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TestContext } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { ROOT } from '../e2e/support.ts';

export type Obj = Record<string, unknown>;
export const CHART = path.join(ROOT, 'charts', 'cloud-route-controller');
export const FILES = path.join(CHART, 'files');

export interface Tools {
  helm: string;
  kustomize: string;
  promtool: string;
  crds: string;
}

export function tools(): Tools | undefined {
  const env: Record<string, string> = {};
  const out = execFileSync('bash', [path.join(ROOT, 'scripts', 'monitoring-tools.sh'), 'paths'], {
    encoding: 'utf8',
  });
  for (const line of out.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) env[line.slice(0, eq)] = line.slice(eq + 1);
  }
  const pick = (k: string): string => process.env[k] ?? env[k] ?? '';
  const t = {
    helm: pick('HELM'),
    kustomize: pick('KUSTOMIZE'),
    promtool: pick('PROMTOOL'),
    crds: pick('PROMETHEUS_OPERATOR_CRDS'),
  };
  return Object.values(t).every((v) => v !== '' && fs.existsSync(v)) ? t : undefined;
}

export const TOOLS = tools();

export function requireTools(t: TestContext): Tools | undefined {
  if (TOOLS) return TOOLS;
  const reason = 'helm/kustomize/promtool missing: run `bash scripts/monitoring-tools.sh build`';
  if (process.env.CI === 'true') throw new Error(`${reason} (CI=true: missing tools are a failure)`);
  t.skip(reason);
  return undefined;
}

export function run(bin: string, args: readonly string[], cwd = ROOT): string {
  try {
    return execFileSync(bin, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `${path.basename(bin)} ${args.join(' ')}: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`,
    );
  }
}

export function docs(text: string): Obj[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as unknown)
    .filter((o): o is Obj => typeof o === 'object' && o !== null);
}

export interface Case {
  readonly name: string;
  readonly release: string;
  readonly namespace: string;
  readonly args: readonly string[];
  /** The kustomization that must render the same objects. */
  readonly kustomization?: string;
}

export const CASES: readonly Case[] = [
  {
    name: 'defaults',
    release: 'cloud-route-controller',
    namespace: 'kube-system',
    args: [],
    kustomization: 'deploy',
  },
  {
    name: 'ServiceMonitor and PrometheusRule',
    release: 'cloud-route-controller',
    namespace: 'kube-system',
    args: ['--set', 'serviceMonitor.enabled=true', '--set', 'prometheusRule.enabled=true'],
    kustomization: 'deploy/monitoring',
  },
  {
    name: 'hcloud, own namespace and release, every option',
    release: 'routes',
    namespace: 'networking',
    args: [
      '--set',
      'provider=hcloud',
      '--set',
      'clusterCIDRs={10.244.0.0/16,fd00:10:244::/56}',
      '--set',
      'watchBasedReconciliation=false',
      '--set',
      'replicas=3',
      '--set',
      'cloudConfig.existingSecret=hcloud-cloud-config',
      '--set',
      'metrics.tlsSecret=routes-serving-cert',
      '--set',
      'metrics.insecurePort=10270',
      '--set',
      'metrics.readers={monitoring/prometheus-k8s}',
      '--set',
      'serviceMonitor.enabled=true',
      '--set',
      'serviceMonitor.labels.release=kube-prometheus-stack',
      '--set',
      'prometheusRule.enabled=true',
      '--set',
      'grafanaDashboard.enabled=true',
      '--set',
      'hostNetwork=true',
      '--set-json',
      'extraArgs=["--route-resync-period=30m","-v=2"]',
      '--set-json',
      'extraEnv=[{"name":"HCLOUD_DEBUG","value":"false"}]',
      '--set-json',
      'envFrom=[{"secretRef":{"name":"hcloud"}}]',
    ],
  },
  {
    name: "openstack: openstack-cloud-controller-manager's cloud-config Secret whole at /etc/config, a CA from another Secret",
    release: 'cloud-route-controller',
    namespace: 'kube-system',
    args: [
      '--set',
      'provider=openstack',
      '--set',
      'cloudConfig.existingSecret=cloud-config',
      '--set',
      'cloudConfig.existingSecretKey=cloud.conf',
      '--set',
      'cloudConfig.existingSecretMountPath=/etc/config',
      '--set-json',
      'extraVolumes=[{"name":"openstack-ca","secret":{"secretName":"openstack-ca"}}]',
      '--set-json',
      'extraVolumeMounts=[{"name":"openstack-ca","mountPath":"/etc/openstack-ca","readOnly":true}]',
    ],
  },
  {
    name: 'pod network, placement, pull secrets, annotations, an own token Secret for the ServiceMonitor',
    release: 'routes',
    namespace: 'kube-system',
    args: [
      '--set',
      'hostNetwork=false',
      '--set-json',
      'nodeSelector={"node-role.kubernetes.io/control-plane":""}',
      '--set-json',
      'imagePullSecrets=["registry-a","registry-b"]',
      '--set-json',
      'podAnnotations={"example.com/scrape":"false"}',
      '--set',
      'serviceMonitor.enabled=true',
      '--set',
      'serviceMonitor.authorization.secretName=prometheus-token',
      '--set',
      'serviceMonitor.authorization.secretKey=bearer',
    ],
  },
  {
    name: 'secure port off, plain metrics on',
    release: 'cloud-route-controller',
    namespace: 'kube-system',
    args: ['--set', 'metrics.securePort=0', '--set', 'metrics.insecurePort=10270'],
  },
];

export function render(t: Tools, c: Case): Obj[] {
  return docs(run(t.helm, ['template', c.release, CHART, '--namespace', c.namespace, ...c.args]));
}

export function key(o: Obj): string {
  const md = o['metadata'] as { name: string; namespace?: string };
  return `${String(o['kind'])} ${md.namespace ?? ''}/${md.name}`;
}

/** Helm's bookkeeping labels are the only difference allowed between the chart and kustomize. */
export function normalize(objs: Obj[]): Map<string, Obj> {
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (typeof v !== 'object' || v === null) return v;
    const out: Obj = {};
    for (const [k, x] of Object.entries(v)) {
      if (k === 'helm.sh/chart' || k === 'app.kubernetes.io/managed-by') continue;
      out[k] = strip(x);
    }
    return out;
  };
  return new Map(objs.map((o) => [key(o), strip(o) as Obj]));
}

export function deploymentArgs(objs: Obj[]): string[] {
  const dep = objs.find((o) => o['kind'] === 'Deployment')!;
  const spec = ((dep['spec'] as Obj)['template'] as { spec: { containers: { args: string[] }[] } }).spec;
  return spec.containers[0]!.args;
}
