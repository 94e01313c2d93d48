// Bad daemon input: malformed cloud config files and flags. The real
// executable must exit 1 with exactly one clear `error: <message>` line per
// problem on stderr, nothing on stdout, and no stack trace. No apiserver is
// needed: every problem is found before the first request.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runToExit } from '../e2e/support.ts';
import { unreachableKubeconfig } from '../support/daemon-run.ts';

describe('bad cloud config and flags: exit 1, one error line each', { timeout: 180_000 }, () => {
  let dir = '';
  let kubeconfig = '';
  const file = (name: string, text: string): string => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, text);
    return p;
  };

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'routectl-config-'));
    // Never contacted: the run must stop at validation.
    kubeconfig = unreachableKubeconfig(dir);
  });

  after(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const base = (): string[] => ['run', `--kubeconfig=${kubeconfig}`, '--cluster-cidr=10.244.0.0/16'];

  const cases: { name: string; args: () => string[]; message: RegExp }[] = [
    {
      name: 'cloud config file missing',
      args: () => ['--cloud-provider=memory', `--cloud-config=${path.join(dir, 'missing.yaml')}`],
      message: /^couldn't open cloud provider configuration .*missing\.yaml: ENOENT/,
    },
    {
      name: 'cloud config not YAML (the parser reports a multi-line code frame)',
      args: () => ['--cloud-provider=memory', `--cloud-config=${file('bad.yaml', 'latency: [1\n')}`],
      message:
        /^cloud provider could not be initialized: memory cloud config: not YAML or JSON: .*line 2, column 1/,
    },
    {
      name: 'cloud config with an unknown field',
      args: () => ['--cloud-provider=memory', `--cloud-config=${file('unknown.yaml', 'latncy: 10ms\n')}`],
      message: /^cloud provider could not be initialized: memory cloud config: unknown field "latncy"$/,
    },
    {
      name: 'cloud config with a wrong type',
      args: () => ['--cloud-provider=memory', `--cloud-config=${file('quota.yaml', 'quota: -1\n')}`],
      message:
        /^cloud provider could not be initialized: memory cloud config: quota must be a non-negative number$/,
    },
    {
      name: 'cloud config that is a list, not a mapping',
      args: () => ['--cloud-provider=memory', `--cloud-config=${file('list.yaml', '- a\n- b\n')}`],
      message: /^cloud provider could not be initialized: memory cloud config: must be a mapping$/,
    },
    {
      name: 'aws cloud config not YAML',
      args: () => ['--cloud-provider=aws', `--cloud-config=${file('aws.yaml', 'region: [\n')}`],
      message: /^cloud provider could not be initialized: aws cloud config: not valid YAML or JSON: /,
    },
    {
      name: 'linux cloud config with an unknown field',
      args: () => ['--cloud-provider=linux', `--cloud-config=${file('linux.yaml', 'tabel: 100\n')}`],
      message: /^cloud provider could not be initialized: linux cloud config: field "tabel" is unknown/,
    },
    {
      name: 'hcloud without a network',
      args: () => ['--cloud-provider=hcloud'],
      message: /^cloud provider could not be initialized: hcloud cloud config: field "network" is required/,
    },
    {
      name: 'azure without a route table (an azure.json of cloud-provider-azure otherwise)',
      args: () => [
        '--cloud-provider=azure',
        `--cloud-config=${file(
          'azure.json',
          JSON.stringify({
            subscriptionId: '11111111-2222-3333-4444-555555555555',
            resourceGroup: 'rg',
            location: 'westeurope',
            vmType: 'vmss',
            useManagedIdentityExtension: true,
          }),
        )}`,
      ],
      message:
        /^cloud provider could not be initialized: azure cloud config: "routeTableName" is required \(the route table of the cluster's subnet\)$/,
    },
    {
      name: "gce with a gce.conf that names no network (kube-up's file otherwise)",
      args: () => [
        '--cloud-provider=gce',
        `--cloud-config=${file('gce.conf', '[global]\ntoken-url = nil\nproject-id = my-project\nnode-tags = k8s-node\nmultizone = true\n')}`,
      ],
      message:
        /^cloud provider could not be initialized: gce cloud config: "network-name" is required in \[global\] \(the VPC network the routes belong to\)$/,
    },
    {
      name: 'openstack cloud.conf with a typo in [Global] (upstream would warn and go on without it)',
      args: () => [
        '--cloud-provider=openstack',
        `--cloud-config=${file(
          'cloud.conf',
          '[Global]\nauth-url = https://keystone:5000/v3\napplication-credential-id = a\napplication-credential-secret = s\nregoin = RegionOne\n[Route]\nrouter-id = r\n',
        )}`,
      ],
      message:
        /^cloud provider could not be initialized: openstack cloud config: line 5: unknown key "regoin" in \[Global\]; known keys: /,
    },
    {
      name: 'unknown provider',
      args: () => ['--cloud-provider=nimbus'],
      message:
        /^unknown cloud provider "nimbus"; registered: aws, azure, gce, hcloud, linux, memory, openstack$/,
    },
    {
      name: 'unparsable cluster CIDR',
      args: () => ['--cloud-provider=memory', '--cluster-cidr=10.0.0.0/33'],
      message: /^invalid --cluster-cidr: failed to parse cidr value:"10\.0\.0\.0\/33" with error:/,
    },
    {
      name: 'zero reconciliation period',
      args: () => ['--cloud-provider=memory', '--route-reconciliation-period=0s'],
      message: /^--route-reconciliation-period must be greater than 0$/,
    },
    {
      name: 'route resync period below 10 s',
      args: () => ['--cloud-provider=memory', '--route-resync-period=5s'],
      message: /^--route-resync-period must be 0 or at least 10s$/,
    },
    {
      name: 'unknown feature gate',
      args: () => ['--cloud-provider=memory', '--feature-gates=RoutesFaster=true'],
      message: /^unrecognized feature gate: RoutesFaster$/,
    },
    {
      name: 'lease shorter than the renew deadline',
      args: () => ['--cloud-provider=memory', '--leader-elect-lease-duration=2s'],
      message: /^leaseDuration must be greater than renewDeadline$/,
    },
    {
      name: 'bad duration',
      args: () => ['--cloud-provider=memory', '--min-resync-period=12 hours'],
      message: /^invalid --min-resync-period "12 hours": /,
    },
    {
      name: 'bad log format',
      args: () => ['--cloud-provider=memory', '--log-format=xml'],
      message: /^--log-format must be one of: text, json$/,
    },
    {
      name: 'bad bind address',
      args: () => ['--cloud-provider=memory', '--metrics-bind-address=everywhere'],
      message: /^invalid --metrics-bind-address "everywhere": /,
    },
    {
      name: 'unreadable kubeconfig',
      args: () => ['--cloud-provider=memory', `--kubeconfig=${path.join(dir, 'nope.kubeconfig')}`],
      message: /^invalid --kubeconfig ".*nope\.kubeconfig": ENOENT/,
    },
  ];

  for (const c of cases) {
    test(c.name, { timeout: 30_000 }, async () => {
      const r = await runToExit([...base(), ...c.args()]);
      assert.equal(r.code, 1, r.stderr);
      assert.equal(r.stdout, '');
      const lines = r.stderr.split('\n').filter((l) => l !== '');
      assert.equal(lines.length, 1, `one line expected:\n${r.stderr}`);
      assert.match(lines[0]!, /^error: /);
      assert.match(lines[0]!.slice('error: '.length), c.message);
    });
  }

  test('several problems: every one reported, one line each', { timeout: 30_000 }, async () => {
    const r = await runToExit([
      ...base(),
      '--cloud-provider=memory',
      `--cloud-config=${file('bad2.yaml', 'latency: [1\n')}`,
      '--log-format=xml',
      '--kube-api-qps=0',
    ]);
    assert.equal(r.code, 1);
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    assert.equal(lines.length, 3, r.stderr);
    assert.ok(
      lines.every((l) => l.startsWith('error: ')),
      r.stderr,
    );
    assert.doesNotMatch(r.stderr, /^\s+at /m, 'no stack trace');
  });
});
