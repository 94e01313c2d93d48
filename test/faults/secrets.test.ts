// Credentials never reach the logs. The real executable runs full cycles at
// -v=10 with known fake secrets that it really uses: a ServiceAccount bearer
// token (TokenRequest, bound by deploy/base/rbac.yaml) in its kubeconfig,
// HCLOUD_TOKEN against a Hetzner API fake, and AWS keys from the default chain
// (environment) against moto; plus failures that put the cloud's and the
// apiserver's error texts in the log. Every byte of stdout and stderr is then
// searched for each secret (and its base64 form).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { EC2Client } from '@aws-sdk/client-ec2';
import { apiRequest, requireTestenv, startControlPlane, testenvBinaries } from '../support/controlplane.ts';
import type { ControlPlane } from '../support/controlplane.ts';
import { HcloudFake } from '../support/hcloud-fake.ts';
import { createFixture, tableRoutes, ZONE } from '../support/ec2-fixture.ts';
import { motoServerPath, startMoto } from '../support/moto.ts';
import { setupControllerUser, waitFor } from '../integration/kube-helpers.ts';
import { Daemon, FAST_LEASE, memoryCloud, runToExit, type CloudFiles } from '../e2e/support.ts';

const enabled = testenvBinaries() !== undefined;
const WATCH = '--feature-gates=CloudControllerManagerWatchBasedRoutesReconciliation=true';
const SECRETS = {
  HCLOUD_TOKEN: 'hcloudSECRET-4f1d9c2e7a6b5d3c1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d',
  AWS_ACCESS_KEY_ID: 'AKIAFAKESECRETKEYID7',
  AWS_SECRET_ACCESS_KEY: 'awsSECRET/wJalrXUtnFEMI+K7MDENG/bPxRfiCYzz',
  AWS_SESSION_TOKEN: 'awsSESSION-IQoJb3JpZ2luX2VjEHEaCXVzLWVhc3QtMSJHMEUCIQD',
};

describe('no credential in any output', { timeout: 300_000 }, () => {
  let cp: ControlPlane | undefined;
  let dir: CloudFiles;
  let saToken = '';
  let tokenKubeconfig = '';
  const saved = { ...process.env };
  const outputs: { name: string; text: string }[] = [];

  before(async () => {
    if (!enabled) return;
    cp = await startControlPlane();
    await setupControllerUser(cp); // applies deploy/base/rbac.yaml, ServiceAccount included
    const r = await apiRequest(
      cp.adminKubeconfig,
      'POST',
      '/api/v1/namespaces/kube-system/serviceaccounts/cloud-route-controller/token',
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 3600 } },
    );
    assert.equal(r.status, 201, r.body);
    saToken = (JSON.parse(r.body) as { status: { token: string } }).status.token;
    dir = memoryCloud();
    const admin = JSON.parse(fs.readFileSync(cp.adminKubeconfig, 'utf8')) as { clusters: unknown[] };
    tokenKubeconfig = path.join(dir.dir, 'token.kubeconfig');
    fs.writeFileSync(
      tokenKubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: admin.clusters,
        users: [{ name: 'sa', user: { token: saToken } }],
        contexts: [{ name: 'sa', context: { cluster: 'testenv', user: 'sa' } }],
        'current-context': 'sa',
      }),
      { mode: 0o600 },
    );
    // The child inherits these (e2e childEnv copies process.env); this file runs in its own process.
    Object.assign(process.env, SECRETS, { AWS_DEFAULT_REGION: 'us-east-1' });
    delete process.env['AWS_PROFILE'];
  });

  after(async () => {
    process.env = saved;
    await cp?.stop();
    if (dir) fs.rmSync(dir.dir, { recursive: true, force: true });
  });

  async function node(name: string, providerID: string, podCIDR: string, ip: string): Promise<void> {
    const r = await apiRequest(cp!.adminKubeconfig, 'POST', '/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name },
      spec: { providerID, podCIDR, podCIDRs: [podCIDR] },
      status: { addresses: [{ type: 'InternalIP', address: ip }] },
    });
    assert.equal(r.status, 201, r.body);
  }

  async function deleteNodes(): Promise<void> {
    const r = await apiRequest(cp!.adminKubeconfig, 'GET', '/api/v1/nodes');
    for (const n of (JSON.parse(r.body) as { items: { metadata: { name: string } }[] }).items)
      await apiRequest(cp!.adminKubeconfig, 'DELETE', `/api/v1/nodes/${n.metadata.name}`);
  }

  async function condition(name: string): Promise<string | undefined> {
    const r = await apiRequest(cp!.adminKubeconfig, 'GET', `/api/v1/nodes/${name}`);
    const n = JSON.parse(r.body) as { status?: { conditions?: { type: string; reason?: string }[] } };
    return n.status?.conditions?.find((c) => c.type === 'NetworkUnavailable')?.reason;
  }

  async function fullRun(name: string, args: string[], done: () => Promise<boolean>): Promise<Daemon> {
    const d = Daemon.start(
      [
        'run',
        `--kubeconfig=${tokenKubeconfig}`,
        '--cluster-cidr=10.244.0.0/16',
        '--metrics-bind-address=127.0.0.1:0',
        '--health-probe-bind-address=127.0.0.1:0',
        '--log-format=json',
        '-v=10',
        WATCH,
        ...FAST_LEASE,
        ...args,
      ],
      path.join(dir.dir, `${name}.log`),
    );
    try {
      await waitFor(`${name}: routes and conditions`, 45_000, done, 200);
      d.signal('SIGTERM');
      assert.deepEqual(await d.waitExit(30_000), { code: 0, signal: null });
      return d;
    } catch (err) {
      console.log(d.tail(40));
      await d.kill();
      throw err;
    } finally {
      outputs.push({ name, text: d.output() });
    }
  }

  test(
    'hcloud provider with HCLOUD_TOKEN, bearer-token kubeconfig, -v=10 json',
    { timeout: 90_000 },
    async (t) => {
      if (!enabled || cp === undefined) return void requireTestenv(t);
      const fake = await HcloudFake.start({ token: SECRETS.HCLOUD_TOKEN });
      try {
        fake.addNetwork({ id: 7, name: 'k8s', ipRange: '10.0.0.0/8' });
        for (const i of [1, 2]) {
          fake.addServer({ id: 100 + i, name: `s${i}`, privateNet: [{ network: 7, ip: `10.0.0.${i}` }] });
          await node(`h${i}`, `hcloud://${100 + i}`, `10.244.${i}.0/24`, `10.0.0.${i}`);
        }
        // An error path too: the API's error text lands in a log line and an Event.
        fake.failNext('POST', '/networks/7/actions/add_route', {
          status: 503,
          code: 'service_error',
          message: 'upstream unavailable',
        });
        const config = path.join(dir.dir, 'hcloud.yaml');
        fs.writeFileSync(config, `network: 7\nendpoint: ${fake.endpoint}\n`);
        const d = await fullRun(
          'hcloud',
          ['--cloud-provider=hcloud', `--cloud-config=${config}`],
          async () => {
            return (
              fake.routes(7).length === 2 &&
              (await condition('h1')) === 'RouteCreated' &&
              (await condition('h2')) === 'RouteCreated'
            );
          },
        );
        assert.ok(
          fake.requests.some((r) => r.status === 503),
          'the injected failure happened',
        );
        assert.ok(fake.requests.filter((r) => r.status === 200).length > 3, 'the token was used');
        assert.match(d.output(), /"level":"info".*"v":10|"v":[5-9]/, 'verbose lines were logged');
        const plan = await runToExit([
          'plan',
          '--cloud-provider=hcloud',
          `--cloud-config=${config}`,
          `--kubeconfig=${tokenKubeconfig}`,
          '--cluster-cidr=10.244.0.0/16',
          '--log-format=text',
          '-v=10',
        ]);
        assert.equal(plan.code, 0, plan.stderr);
        outputs.push({ name: 'hcloud plan (text)', text: plan.stdout + plan.stderr });
      } finally {
        await fake.close();
        await deleteNodes();
      }
    },
  );

  test(
    'aws provider with keys from the default chain (environment), -v=10 json',
    { timeout: 120_000 },
    async (t) => {
      if (!enabled || cp === undefined) return void requireTestenv(t);
      if (motoServerPath() === undefined) {
        if (process.env.CI === 'true') throw new Error('moto_server missing');
        t.skip('moto_server not installed: run scripts/moto.sh');
        return;
      }
      const moto = await startMoto();
      const ec2 = new EC2Client({
        endpoint: moto.endpoint,
        region: 'us-east-1',
        credentials: {
          accessKeyId: SECRETS.AWS_ACCESS_KEY_ID,
          secretAccessKey: SECRETS.AWS_SECRET_ACCESS_KEY,
        },
      });
      try {
        const f = await createFixture(ec2, 'kubernetes', 2);
        for (const [i, inst] of f.instances.entries())
          await node(`a${i}`, `aws:///${ZONE}/${inst.id}`, `10.244.${10 + i}.0/24`, inst.privateIp);
        const config = path.join(dir.dir, 'aws.yaml');
        fs.writeFileSync(
          config,
          `endpoint: ${moto.endpoint}\nrouteTableId: ${f.tableId}\nvpcId: ${f.vpcId}\n`,
        );
        await fullRun('aws', ['--cloud-provider=aws', `--cloud-config=${config}`], async () => {
          const routes = (await tableRoutes(ec2, f.tableId)).filter((r) => r.InstanceId !== undefined);
          return routes.length === 2 && (await condition('a0')) === 'RouteCreated';
        });
      } finally {
        ec2.destroy();
        await moto.stop();
        await deleteNodes();
      }
    },
  );

  test('not one secret in any stdout or stderr byte', (t) => {
    if (!enabled || cp === undefined) return void requireTestenv(t);
    assert.ok(outputs.length >= 2, 'the runs above produced output');
    const secrets: Record<string, string> = { ...SECRETS, 'ServiceAccount token': saToken };
    // The JWT's signature alone is secret enough to look for separately.
    secrets['ServiceAccount token signature'] = saToken.split('.')[2] ?? saToken;
    for (const [k, v] of Object.entries({ ...secrets }))
      secrets[`${k} (base64)`] = Buffer.from(v).toString('base64');
    assert.match(
      outputs.find((o) => o.name === 'hcloud')?.text ?? '',
      /upstream unavailable/,
      'error texts are logged',
    );
    for (const o of outputs) {
      t.diagnostic(`${o.name}: ${o.text.length} bytes, ${o.text.split('\n').length} lines searched`);
      for (const [what, value] of Object.entries(secrets))
        assert.ok(!o.text.includes(value), `${what} appears in the ${o.name} output`);
    }
  });
});
