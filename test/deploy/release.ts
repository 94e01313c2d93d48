/**
 * The chart as an operator installs it (`helm install/upgrade/uninstall` against the real
 * apiserver), and the Deployment's rollout as the ReplicaSet controller and the kubelet would do
 * it: `replicas` pods of the current revision; an upgrade replaces them one at a time under the
 * chart's strategy (maxSurge 0, maxUnavailable 1), newest old pod first, each new pod ready
 * before the next old one goes.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as path from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import type { Cluster } from '../support/kwok-cluster.ts';
import { startPod, type Pod, type PodTemplate } from './pod.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const CHART = path.join(ROOT, 'charts', 'cloud-route-controller');
export const NAMESPACE = 'kube-system';
export const RELEASE = 'cloud-route-controller';

type Obj = Record<string, unknown>;
export interface Manifest {
  readonly objects: Obj[];
  readonly deployment: { spec: { replicas: number; template: PodTemplate } };
}

/** helm from `scripts/monitoring-tools.sh build` (or HELM). */
export function helmPath(): string | undefined {
  if (process.env.HELM !== undefined && process.env.HELM !== '') return process.env.HELM;
  const out = execFileSync('bash', [path.join(ROOT, 'scripts', 'monitoring-tools.sh'), 'paths'], {
    encoding: 'utf8',
  });
  const p = /^HELM=(.*)$/m.exec(out)?.[1] ?? '';
  return p !== '' && fs.existsSync(p) ? p : undefined;
}

let podSerial = 0;

export class Release {
  private readonly helm: string;
  private readonly cluster: Cluster;
  private readonly valuesDir: string;
  private revision = 0;
  private pods: { pod: Pod; revision: number; started: number }[] = [];
  /** Host loopback ports the pods reach (moto, API fakes). */
  hostPorts: number[] = [];

  constructor(helm: string, cluster: Cluster) {
    this.helm = helm;
    this.cluster = cluster;
    this.valuesDir = fs.mkdtempSync(path.join(cluster.cp.dir, 'values-'));
  }

  private run(args: string[]): string {
    try {
      return execFileSync(this.helm, [...args, '--kubeconfig', this.cluster.cp.adminKubeconfig], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          ...process.env,
          HELM_CACHE_HOME: this.valuesDir,
          HELM_CONFIG_HOME: this.valuesDir,
          HELM_DATA_HOME: this.valuesDir,
        },
      });
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new Error(`helm ${args.join(' ')}: ${e.message}\n${e.stderr ?? ''}`);
    }
  }

  private valuesFile(values: Obj): string {
    const f = path.join(this.valuesDir, `values-${this.revision + 1}.yaml`);
    fs.writeFileSync(f, stringify(values));
    return f;
  }

  /** `helm install` (for real, not a dry run), then the pods of revision 1. */
  async install(values: Obj): Promise<Manifest> {
    this.run(['install', RELEASE, CHART, '--namespace', NAMESPACE, '-f', this.valuesFile(values)]);
    this.revision = 1;
    const m = this.manifest();
    for (let i = 0; i < m.deployment.spec.replicas; i++) await this.startPod(m);
    return m;
  }

  /** `helm upgrade`, then the rollout under the chart's strategy. */
  async upgrade(values: Obj, onStep?: (what: string) => Promise<void>): Promise<Manifest> {
    this.run(['upgrade', RELEASE, CHART, '--namespace', NAMESPACE, '-f', this.valuesFile(values)]);
    this.revision += 1;
    const m = this.manifest();
    const old = [...this.pods].sort((a, b) => b.started - a.started);
    for (const o of old) {
      await o.pod.stop();
      this.pods = this.pods.filter((p) => p !== o);
      await onStep?.(`stopped ${o.pod.name}`);
      await this.startPod(m);
      await onStep?.(`started revision ${this.revision}`);
    }
    return m;
  }

  /** `helm uninstall`: the Deployment goes, so do its pods. */
  async uninstall(): Promise<void> {
    this.run(['uninstall', RELEASE, '--namespace', NAMESPACE, '--wait']);
    await this.stopPods();
  }

  async stopPods(): Promise<void> {
    for (const p of this.pods) await p.pod.stop();
    this.pods = [];
  }

  current(): readonly Pod[] {
    return this.pods.map((p) => p.pod);
  }

  manifest(): Manifest {
    const text = this.run(['get', 'manifest', RELEASE, '--namespace', NAMESPACE]);
    const objects = parseAllDocuments(text)
      .map((d) => d.toJS() as Obj | null)
      .filter((o): o is Obj => o !== null);
    const deployment = objects.find((o) => o['kind'] === 'Deployment') as Manifest['deployment'] | undefined;
    if (deployment === undefined) throw new Error(`no Deployment in the release manifest:\n${text}`);
    return { objects, deployment };
  }

  private async startPod(m: Manifest): Promise<Pod> {
    podSerial += 1;
    const pod = await startPod({
      adminKubeconfig: this.cluster.cp.adminKubeconfig,
      namespace: NAMESPACE,
      template: m.deployment.spec.template,
      name: `${RELEASE}-r${this.revision}-p${podSerial}`,
      apiserverPort: Number(new URL(this.cluster.cp.server).port),
      caCrt: caFile(this.cluster),
      hostPorts: this.hostPorts,
    });
    this.pods.push({ pod, revision: this.revision, started: Date.now() });
    await waitReady(pod, 60_000);
    return pod;
  }
}

/** The cluster CA, as the kubelet puts it into the pod's ServiceAccount volume. */
function caFile(cluster: Cluster): string {
  const cfg = JSON.parse(fs.readFileSync(cluster.cp.adminKubeconfig, 'utf8')) as {
    clusters: { cluster: { 'certificate-authority-data': string } }[];
  };
  const f = path.join(cluster.cp.dir, 'cluster-ca.crt');
  fs.writeFileSync(f, Buffer.from(cfg.clusters[0]!.cluster['certificate-authority-data'], 'base64'));
  return f;
}

/**
 * GET over the pod's port-forward (HTTPS, the daemon's self-signed serving certificate), to
 * containerPort or else the pod's first container port (the chart's `https`, --secure-port).
 */
export function podGet(
  pod: Pod,
  urlPath: string,
  token?: string,
  containerPort?: number,
): Promise<{ status: number; body: string }> {
  const port = containerPort === undefined ? pod.ports.values().next().value : pod.ports.get(containerPort);
  if (port === undefined) throw new Error(`${pod.name} exposes no port ${containerPort ?? '(none)'}`);
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port,
        path: urlPath,
        rejectUnauthorized: false,
        agent: false,
        timeout: 10_000,
        headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timeout: ${pod.name} ${urlPath}`)));
    req.on('error', reject);
    req.end();
  });
}

/** The readiness probe's view: /readyz 200 (the chart's readinessProbe). */
export async function waitReady(pod: Pod, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    const code = await pod.exitCode().catch(() => undefined);
    if (code !== undefined) throw new Error(`${pod.name} exited with ${code}:\n${await pod.logs()}`);
    try {
      const r = await podGet(pod, '/readyz');
      if (r.status === 200) return;
      last = `${r.status} ${r.body}`;
    } catch (err) {
      last = String(err);
    }
    if (Date.now() > deadline)
      throw new Error(`${pod.name} not ready after ${timeoutMs} ms (${last}):\n${await pod.logs()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
