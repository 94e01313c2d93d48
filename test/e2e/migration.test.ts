// docs/migration.md's commands, run as written (paths replaced): the `plan` check with
// cloud-provider-aws's cloud.conf and command line, by the real executable, against a real
// kube-apiserver whose nodes the CCM routed and moto holding the table as the CCM wrote it.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CreateRouteCommand, EC2Client } from '@aws-sdk/client-ec2';
import { requireTestenv, startControlPlane, testenvBinaries } from '../support/controlplane.ts';
import type { ControlPlane } from '../support/controlplane.ts';
import { createTable, createVpc, runInstances, ZONE } from '../support/ec2-fixture.ts';
import { motoServerPath, motoSkip, startMoto, type Moto } from '../support/moto.ts';
import { Admin, internalIP } from '../integration/kube-helpers.ts';
import { Daemon, ROOT, runToExit } from './support.ts';

const DOC = path.join(ROOT, 'docs', 'migration.md');

/** The shell command in the first ```sh block after `<!-- migration-test: <name> -->`, as argv. */
function docCommand(markdown: string, name: string): string[] {
  const marker = markdown.indexOf(`<!-- migration-test: ${name} -->`);
  assert.notEqual(marker, -1, `docs/migration.md has no block marked ${name}`);
  const block = /```sh\n([\s\S]*?)```/.exec(markdown.slice(marker));
  assert.ok(block, `no sh block after the ${name} marker`);
  return block[1]!.replace(/\\\n/g, ' ').trim().split(/\s+/);
}

const enabled = testenvBinaries() !== undefined && motoServerPath() !== undefined;

describe('docs/migration.md, run', { timeout: 180_000 }, () => {
  let cp: ControlPlane | undefined;
  let moto: Moto | undefined;
  let ec2: EC2Client | undefined;
  let dir: string;
  let saved: NodeJS.ProcessEnv;

  before(async () => {
    if (!enabled) return;
    saved = { ...process.env };
    // The child inherits these: credentials for moto, and no instance metadata probe.
    process.env.AWS_ACCESS_KEY_ID = 'testing';
    process.env.AWS_SECRET_ACCESS_KEY = 'testing';
    process.env.AWS_EC2_METADATA_DISABLED = 'true';
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'routectl-migration-'));
    [cp, moto] = await Promise.all([startControlPlane(), startMoto()]);
    ec2 = new EC2Client({
      endpoint: moto.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    });
    const { vpcId, subnetId } = await createVpc(ec2);
    const tableId = await createTable(ec2, vpcId, 'prod', 'owned');
    const instances = await runInstances(ec2, subnetId, 2);
    const admin = new Admin(cp.adminKubeconfig);
    for (const [i, inst] of instances.entries()) {
      const name = `ip-10-0-1-${i}.ec2.internal`;
      // As cloud-provider-aws left them: its route, and the condition its route controller wrote.
      await ec2.send(
        new CreateRouteCommand({
          RouteTableId: tableId,
          DestinationCidrBlock: `10.244.${i}.0/24`,
          InstanceId: inst.id,
        }),
      );
      await admin.createNode(
        name,
        [`10.244.${i}.0/24`],
        internalIP(inst.privateIp),
        `aws:///${ZONE}/${inst.id}`,
      );
      const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      await admin.patchStatus(name, {
        conditions: [
          {
            type: 'NetworkUnavailable',
            status: 'False',
            reason: 'RouteCreated',
            message: 'RouteController created a route',
            lastTransitionTime: now,
            lastHeartbeatTime: now,
          },
        ],
      });
    }
    // The cloud.conf cloud-provider-aws reads, its EC2 endpoint pointed at moto.
    fs.writeFileSync(
      path.join(dir, 'cloud.conf'),
      `[Global]\nRegion = us-east-1\nKubernetesClusterID = prod\n\n[ServiceOverride "ec2"]\nService = EC2\nRegion = us-east-1\nURL = ${moto.endpoint}\nSigningRegion = us-east-1\n`,
    );
  });

  after(async () => {
    if (!enabled) return;
    process.env = saved;
    ec2?.destroy();
    await moto?.stop();
    await cp?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('the plan check with the CCM arguments shows nothing to change', async (t) => {
    if (!enabled || cp === undefined) {
      requireTestenv(t);
      // Throws under CI=true (a missing emulator is a failure there), else skips.
      const moto = motoSkip();
      if (moto.skip !== false) t.skip(moto.skip);
      return;
    }
    const argv = docCommand(fs.readFileSync(DOC, 'utf8'), 'aws-plan');
    assert.deepEqual(argv.slice(0, 2), ['npx', 'cloud-route-controller']);
    const args = argv
      .slice(2)
      .map((a) => (a === '~/.kube/config' ? cp!.adminKubeconfig : a))
      .map((a) => a.replace('/etc/kubernetes/cloud.conf', path.join(dir, 'cloud.conf')));
    const r = await runToExit([...args, '--log-format=json']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Routes to create \(0\):\n {2}none/);
    assert.match(r.stdout, /Routes to delete \(0\):\n {2}none/);
    assert.match(r.stdout, /Node conditions to patch \(0\):\n {2}none/);
    const ignored = r.stderr
      .split('\n')
      .filter((l) => l.includes('Ignoring cloud-controller-manager flags'))
      .map((l) => (JSON.parse(l) as { flags: string[] }).flags);
    assert.deepEqual(ignored, [['--use-service-account-credentials']]);
  });

  test('run with the same arguments: the CCM flags listed once as ignored, nothing written', async (t) => {
    if (!enabled || cp === undefined) {
      requireTestenv(t);
      const moto = motoSkip();
      if (moto.skip !== false) t.skip(moto.skip);
      return;
    }
    const argv = docCommand(fs.readFileSync(DOC, 'utf8'), 'aws-plan');
    const args = argv
      .slice(3) // npx cloud-route-controller plan
      .map((a) => (a === '~/.kube/config' ? cp!.adminKubeconfig : a))
      .map((a) => a.replace('/etc/kubernetes/cloud.conf', path.join(dir, 'cloud.conf')));
    const d = Daemon.start(
      ['run', ...args, '--log-format=json', '--leader-elect=false'],
      path.join(dir, 'run.log'),
    );
    try {
      const done = await d.waitForLog('Route reconcile finished', 60_000);
      assert.equal(done['outcome'], 'noop', d.tail());
      assert.equal(done['created'], 0);
      assert.equal(done['deleted'], 0);
      assert.equal(done['conditions'], 0, 'no condition written');
      const ignored = d
        .logs()
        .filter(
          (r) => r.msg === 'Ignoring cloud-controller-manager flags that do not concern the route controller',
        );
      assert.deepEqual(
        ignored.map((r) => r['flags']),
        [['--use-service-account-credentials']],
      );
      d.signal('SIGTERM');
      assert.equal((await d.waitExit(30_000)).code, 0, d.tail());
    } finally {
      await d.kill();
    }
  });
});
