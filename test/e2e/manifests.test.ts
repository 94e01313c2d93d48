// Every manifest in deploy/ passes a server-side dry-run apply on a real
// kube-apiserver (schema, defaulting, validation, admission), the
// kustomization lists them all, and the Deployment's args pass the daemon's
// own flag validation.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { parseFlags } from '../../src/cli/flags.ts';
import { apiRequest, requireTestenv, startControlPlane, testenvBinaries } from '../support/controlplane.ts';
import type { ControlPlane } from '../support/controlplane.ts';
import { ROOT } from './support.ts';

const DEPLOY = path.join(ROOT, 'deploy', 'base');
type Obj = Record<string, unknown>;

function manifestFiles(): string[] {
  return fs
    .readdirSync(DEPLOY)
    .filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml')
    .sort();
}

function objects(file: string): Obj[] {
  return parseAllDocuments(fs.readFileSync(path.join(DEPLOY, file), 'utf8'))
    .map((d) => d.toJS() as unknown)
    .filter((o): o is Obj => typeof o === 'object' && o !== null);
}

interface ApiResource {
  name: string;
  kind: string;
  namespaced: boolean;
}

const enabled = testenvBinaries() !== undefined;

describe('deploy/base manifests', { timeout: 120_000 }, () => {
  let cp: ControlPlane | undefined;
  const discovery = new Map<string, ApiResource[]>();

  before(async () => {
    if (enabled) cp = await startControlPlane();
  });
  after(async () => {
    await cp?.stop();
  });

  async function resourceFor(apiVersion: string, kind: string): Promise<ApiResource> {
    let list = discovery.get(apiVersion);
    if (!list) {
      const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
      const r = await apiRequest(cp!.adminKubeconfig, 'GET', base);
      assert.equal(r.status, 200, `discovery ${base}: ${r.body}`);
      list = (JSON.parse(r.body) as { resources: ApiResource[] }).resources.filter(
        (x) => !x.name.includes('/'),
      );
      discovery.set(apiVersion, list);
    }
    const res = list.find((x) => x.kind === kind);
    assert.ok(res, `no resource for ${apiVersion} ${kind}`);
    return res;
  }

  test('kustomization.yaml lists every manifest', () => {
    const k = parse(fs.readFileSync(path.join(DEPLOY, 'kustomization.yaml'), 'utf8')) as {
      resources: string[];
    };
    assert.deepEqual([...k.resources].sort(), manifestFiles());
  });

  test('the Deployment runs the daemon with valid flags, watch mode, JSON logs and HTTPS probes on the secure port', () => {
    const dep = objects('deployment.yaml').find((o) => o['kind'] === 'Deployment')!;
    const pod = (dep['spec'] as Obj)['template'] as { spec: Obj };
    const c = (pod.spec['containers'] as Obj[])[0]!;
    const args = c['args'] as string[];
    assert.equal(args[0], 'run');
    const parsed = parseFlags(args.slice(1));
    assert.deepEqual(parsed.errors, []);
    assert.equal(parsed.flags.watchBasedReconciliation, true);
    assert.equal(parsed.flags.logFormat, 'json');
    assert.equal((dep['spec'] as Obj)['replicas'], 2);
    assert.equal(pod.spec['serviceAccountName'], 'cloud-route-controller');
    assert.equal(parsed.flags.healthProbeBindAddress, 'disabled');
    assert.equal(parsed.flags.metricsBindAddress, 'disabled');
    const ports = c['ports'] as { name: string; containerPort: number }[];
    assert.equal(ports.find((p) => p.name === 'https')?.containerPort, parsed.flags.serving.securePort);
    type Probe = { httpGet: { path: string; port: string; scheme: string } };
    const ready = (c['readinessProbe'] as Probe).httpGet;
    const live = (c['livenessProbe'] as Probe).httpGet;
    assert.deepEqual([ready.path, ready.port, ready.scheme], ['/readyz', 'https', 'HTTPS']);
    assert.deepEqual([live.path, live.port, live.scheme], ['/livez', 'https', 'HTTPS']);
    for (const p of [ready.path, live.path]) assert.ok(parsed.flags.serving.alwaysAllowPaths.includes(p));
    const sc = c['securityContext'] as Obj;
    assert.equal(sc['readOnlyRootFilesystem'], true);
    assert.equal((pod.spec['securityContext'] as Obj)['runAsNonRoot'], true);
    const sa = objects('rbac.yaml').find((o) => o['kind'] === 'ServiceAccount')!;
    assert.equal((sa['metadata'] as Obj)['name'], 'cloud-route-controller');
  });

  for (const file of manifestFiles()) {
    test(`${file}: server-side dry-run apply succeeds`, async (t) => {
      if (!enabled || !cp) {
        requireTestenv(t);
        return;
      }
      for (const o of objects(file)) {
        const kind = String(o['kind']);
        const md = o['metadata'] as { name: string; namespace?: string };
        const res = await resourceFor(String(o['apiVersion']), kind);
        const group = String(o['apiVersion']).includes('/')
          ? `/apis/${String(o['apiVersion'])}`
          : `/api/${String(o['apiVersion'])}`;
        const ns = res.namespaced ? `/namespaces/${md.namespace ?? 'default'}` : '';
        const url = `${group}${ns}/${res.name}/${md.name}?dryRun=All&fieldManager=test`;
        const r = await apiRequest(
          cp.adminKubeconfig,
          'PATCH',
          url,
          stringify(o),
          'application/apply-patch+yaml',
        );
        assert.ok(
          r.status === 200 || r.status === 201,
          `${file} ${kind}/${md.name}: HTTP ${r.status} ${r.body}`,
        );
        // Dry run: nothing was stored.
        const get = await apiRequest(cp.adminKubeconfig, 'GET', `${group}${ns}/${res.name}/${md.name}`);
        assert.equal(get.status, 404, `${kind}/${md.name} must not exist after a dry run`);
      }
    });
  }
});
