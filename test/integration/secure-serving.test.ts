/**
 * The daemon's secure port (SPEC §7.5) against a real kube-apiserver: TokenReview and
 * SubjectAccessReview are answered by the apiserver for real ServiceAccount tokens (TokenRequest),
 * with the RBAC of deploy/base/rbac.yaml. Then every metric the alerts and the dashboard query must
 * exist in that authorized scrape.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import https from 'node:https';
import * as path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { after, before, describe, test } from 'node:test';
import { parse } from 'yaml';
import { Daemon, memoryCloud, ROOT, type CloudFiles } from '../e2e/support.ts';
import { apiRequest, requireTestenv, startControlPlane, testenvBinaries } from '../support/controlplane.ts';
import type { ControlPlane } from '../support/controlplane.ts';
import { freePort } from '../support/kube-http.ts';
import { exposedNames, metricNames } from '../support/promql-names.ts';
import { setupControllerUser, waitFor } from './kube-helpers.ts';

const enabled = testenvBinaries() !== undefined;
const NS = 'monitoring';
const CHART_FILES = path.join(ROOT, 'charts', 'cloud-route-controller', 'files');

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
  fingerprint256: string;
  subjectaltname: string;
}

/** GET over TLS without CA verification; the caller pins the certificate by its fingerprint. */
function get(port: number, urlPath: string, token?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = https.get(
      {
        host: '127.0.0.1',
        port,
        path: urlPath,
        rejectUnauthorized: false,
        agent: false,
        headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
      },
      (res) => {
        const peer = (res.socket as TLSSocket).getPeerCertificate();
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body,
            headers: res.headers,
            fingerprint256: peer.fingerprint256,
            subjectaltname: peer.subjectaltname ?? '',
          }),
        );
      },
    );
    req.on('error', reject);
  });
}

async function createOk(cp: ControlPlane, urlPath: string, body: object): Promise<string> {
  const r = await apiRequest(cp.adminKubeconfig, 'POST', urlPath, body);
  assert.ok(r.status === 201 || r.status === 409, `${urlPath}: ${r.status} ${r.body}`);
  return r.body;
}

async function serviceAccountToken(cp: ControlPlane, name: string): Promise<string> {
  await createOk(cp, `/api/v1/namespaces/${NS}/serviceaccounts`, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name },
  });
  const body = await createOk(cp, `/api/v1/namespaces/${NS}/serviceaccounts/${name}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 3600 },
  });
  return (JSON.parse(body) as { status: { token: string } }).status.token;
}

describe('secure serving against the real apiserver', { timeout: 240_000 }, () => {
  let cp: ControlPlane | undefined;
  let cloud: CloudFiles | undefined;
  let daemon: Daemon | undefined;
  let port = 0;
  let fingerprint = '';
  let scraperToken = '';
  let strangerToken = '';

  before(async () => {
    if (!enabled) return;
    cp = await startControlPlane();
    const kubeconfig = await setupControllerUser(cp); // deploy/base/rbac.yaml, auth-delegator included
    await createOk(cp, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    scraperToken = await serviceAccountToken(cp, 'prometheus');
    strangerToken = await serviceAccountToken(cp, 'stranger');
    // What deploy/base/rbac.yaml asks the operator to do for the scraper.
    await createOk(cp, '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'prometheus-cloud-route-controller-metrics' },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'cloud-route-controller-metrics-reader',
      },
      subjects: [{ kind: 'ServiceAccount', namespace: NS, name: 'prometheus' }],
    });
    // The authorizer sees the binding later, and the daemon caches a denial for 10 s: scrape
    // only once the apiserver allows it.
    await waitFor('the scraper binding effective', 20_000, async () => {
      const r = await apiRequest(
        cp!.adminKubeconfig,
        'POST',
        '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            user: `system:serviceaccount:${NS}:prometheus`,
            groups: ['system:serviceaccounts', `system:serviceaccounts:${NS}`, 'system:authenticated'],
            nonResourceAttributes: { path: '/metrics', verb: 'get' },
          },
        },
      );
      return (
        r.status === 201 &&
        (JSON.parse(r.body) as { status?: { allowed?: boolean } }).status?.allowed === true
      );
    });
    cloud = memoryCloud();
    port = await freePort();
    daemon = Daemon.start(
      [
        'run',
        '--cloud-provider=memory',
        `--cloud-config=${cloud.config}`,
        `--kubeconfig=${kubeconfig}`,
        '--cluster-cidr=10.244.0.0/16',
        '--leader-elect=false',
        `--secure-port=${port}`,
        '--bind-address=127.0.0.1',
        '--log-format=json',
      ],
      path.join(cloud.dir, 'daemon.log'),
    );
    assert.equal(await daemon.port('securely'), port);
    await daemon.waitForLog('Generated self-signed serving certificate', 10_000, (r) => {
      fingerprint = String(r['sha256']);
      return true;
    });
  });

  after(async () => {
    await daemon?.kill();
    if (cloud) fs.rmSync(cloud.dir, { recursive: true, force: true });
    await cp?.stop();
  });

  test('no token: 401 with a Bearer challenge; a token the apiserver does not know: 401', async (t) => {
    if (!enabled || !cp) {
      requireTestenv(t);
      return;
    }
    const none = await get(port, '/metrics');
    assert.equal(none.status, 401);
    assert.match(String(none.headers['www-authenticate']), /^Bearer /);
    assert.doesNotMatch(none.body, /route_controller_/);
    const forged = await get(port, '/metrics', `${scraperToken.slice(0, -4)}AAAA`);
    assert.equal(forged.status, 401);
  });

  test('a ServiceAccount token without the metrics RBAC: 403', async (t) => {
    if (!enabled || !cp) {
      requireTestenv(t);
      return;
    }
    const r = await get(port, '/metrics', strangerToken);
    assert.equal(r.status, 403);
    assert.match(
      r.body,
      /^forbidden: User "system:serviceaccount:monitoring:stranger" cannot get path "\/metrics"/,
    );
    assert.doesNotMatch(r.body, /route_controller_/);
  });

  test('the scraping ServiceAccount: 200 with the metrics', async (t) => {
    if (!enabled || !cp) {
      requireTestenv(t);
      return;
    }
    const r = await get(port, '/metrics', scraperToken);
    assert.equal(r.status, 200, r.body);
    assert.match(r.body, /^# HELP route_controller_route_sync_total /m);
    assert.match(r.body, /^leader_election_master_status|^# TYPE leader_election_master_status gauge/m);
  });

  test('health paths are open without a token', async (t) => {
    if (!enabled || !cp) {
      requireTestenv(t);
      return;
    }
    for (const p of ['/healthz', '/livez', '/readyz']) {
      // /readyz turns 200 once the node cache has synced.
      const deadline = Date.now() + 20_000;
      let r = await get(port, p);
      while (r.status !== 200 && Date.now() < deadline) {
        await new Promise((res) => setTimeout(res, 200));
        r = await get(port, p);
      }
      assert.equal(r.status, 200, `${p}: ${r.body}`);
    }
    assert.equal((await get(port, '/nothing')).status, 401, 'other paths are not open');
  });

  test('the certificate is the self-signed one logged at start, for 127.0.0.1', async (t) => {
    if (!enabled || !cp) {
      requireTestenv(t);
      return;
    }
    const r = await get(port, '/healthz');
    assert.match(fingerprint, /^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    assert.equal(r.fingerprint256, fingerprint, 'the client can pin the logged fingerprint');
    assert.match(r.subjectaltname, /IP Address:127\.0\.0\.1/);
  });

  test('every metric the alerts and the dashboard query is in the scrape', async (t) => {
    if (!enabled || !cp) {
      requireTestenv(t);
      return;
    }
    const exposed = exposedNames((await get(port, '/metrics', scraperToken)).body);
    const alerts = parse(fs.readFileSync(path.join(CHART_FILES, 'alerts.yaml'), 'utf8')) as {
      groups: { rules: { alert: string; expr: string }[] }[];
    };
    const dashboard = JSON.parse(fs.readFileSync(path.join(CHART_FILES, 'dashboard.json'), 'utf8')) as {
      panels: { title: string; targets: { expr: string }[] }[];
    };
    const queries = [
      ...alerts.groups.flatMap((g) => g.rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr }))),
      ...dashboard.panels.flatMap((p) =>
        p.targets.map((q) => ({ where: `panel "${p.title}"`, expr: q.expr })),
      ),
    ];
    assert.ok(queries.length >= 20, `found ${queries.length} queries`);
    const missing: string[] = [];
    const seen = new Set<string>();
    for (const q of queries) {
      const names = metricNames(q.expr);
      assert.ok(names.length > 0, `${q.where}: no metric in ${q.expr}`);
      for (const n of names) {
        seen.add(n);
        if (!exposed.has(n)) missing.push(`${q.where}: ${n}`);
      }
    }
    assert.deepEqual(missing, []);
    t.diagnostic(`${seen.size} metric names in ${queries.length} queries, all exposed`);
  });
});
