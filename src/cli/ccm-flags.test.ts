// R120: a cloud-controller-manager's command line, as each cloud's upstream manifest or chart
// writes it, parses, validates and sets the daemon up; --controllers decides whether it idles.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { routeControllerEnabled } from './ccm-flags.ts';
import { idleReason, parseFlags } from './flags.ts';
import type { CliIO } from './io.ts';
import { prepare } from './setup.ts';

/**
 * Each cloud's CCM arguments as upstream writes them, the binary's path dropped. Only
 * --cloud-provider differs between a cloud and the next, so each is rewritten to `memory`
 * for the set-up test (the cloud plug-ins' own config is tested beside each plug-in).
 */
const UPSTREAM: Record<string, readonly string[]> = {
  // kubernetes/cloud-provider-aws examples/existing-cluster/base/aws-cloud-controller-manager-daemonset.yaml,
  // with the route controller on as its comment says a routes-based CNI needs.
  aws: [
    '--v=2',
    '--cloud-provider=aws',
    '--use-service-account-credentials=true',
    '--configure-cloud-routes=true',
    '--cluster-cidr=10.244.0.0/16',
  ],
  // kubernetes-sigs/cloud-provider-azure examples/out-of-tree/cloud-controller-manager.yaml.
  azure: [
    '--allocate-node-cidrs=true',
    '--cloud-config=/etc/kubernetes/cloud-config/azure.json',
    '--cloud-provider=azure',
    '--cluster-cidr=10.244.0.0/16',
    '--cluster-name=k8s',
    '--controllers=*,-cloud-node',
    '--configure-cloud-routes=true',
    '--leader-elect=true',
    '--route-reconciliation-period=10s',
    '--v=4',
    '--secure-port=10267',
  ],
  // kubernetes/kubernetes cluster/gce/gci/configure-helper.sh start-cloud-controller-manager
  // (kubenet network provider), which fills cloud-provider-gcp's deploy/cloud-controller-manager.manifest.
  gce: [
    '--v=4',
    '--cloud-config=/etc/gce.conf',
    '--secure-port=10258',
    '--use-service-account-credentials',
    '--cloud-provider=gce',
    '--concurrent-node-syncs=10',
    '--kubeconfig=/etc/srv/kubernetes/cloud-controller-manager/kubeconfig',
    '--authorization-kubeconfig=/etc/srv/kubernetes/cloud-controller-manager/kubeconfig',
    '--authentication-kubeconfig=/etc/srv/kubernetes/cloud-controller-manager/kubeconfig',
    '--cluster-name=kubernetes',
    '--cluster-cidr=10.64.0.0/14',
    '--allocate-node-cidrs=true',
  ],
  // kubernetes/cloud-provider-openstack manifests/controller-manager/openstack-cloud-controller-manager-ds.yaml.
  openstack: [
    '--v=1',
    '--cluster-name=kubernetes',
    '--cloud-config=/etc/config/cloud.conf',
    '--cloud-provider=openstack',
    '--use-service-account-credentials=false',
    '--bind-address=127.0.0.1',
    '--cluster-cidr=10.244.0.0/16',
  ],
  // hetznercloud/hcloud-cloud-controller-manager deploy/ccm-networks.yaml.
  hcloud: [
    '--allow-untagged-cloud',
    '--cloud-provider=hcloud',
    '--feature-gates=CloudControllerManagerWatchBasedRoutesReconciliation=true',
    '--route-reconciliation-period=30s',
    '--webhook-secure-port=0',
    '--allocate-node-cidrs=true',
    '--cluster-cidr=10.244.0.0/16',
    '--leader-elect=false',
  ],
};

function captureIO(files: Record<string, string> = {}): CliIO & { err: string[] } {
  const err: string[] = [];
  return {
    err,
    stdout: () => {},
    stderr: (t) => err.push(t),
    env: {},
    readFile: (p) => (p in files ? Promise.resolve(files[p]!) : Promise.reject(new Error(`ENOENT: ${p}`))),
    exit: () => {},
    onSignal: () => () => {},
  };
}

describe('R120 CCM command lines', () => {
  for (const [cloud, args] of Object.entries(UPSTREAM)) {
    test(`${cloud}: the upstream CCM arguments parse, validate and reconcile routes`, () => {
      const r = parseFlags(args);
      assert.deepEqual(r.errors, []);
      assert.equal(r.flags.cloudProvider, cloud);
      assert.equal(r.flags.routesEnabled, true);
      assert.equal(idleReason(r.flags), undefined);
    });

    test(`${cloud}: the daemon sets up with them, listing the ignored flags once`, async () => {
      const argv = args
        .filter(
          (a) => !/^--(cloud-config|kubeconfig|authentication-kubeconfig|authorization-kubeconfig)=/.test(a),
        )
        .map((a) => (a.startsWith('--cloud-provider=') ? '--cloud-provider=memory' : a))
        .concat(['--master=http://127.0.0.1:1', '--log-format=json']);
      const io = captureIO();
      const setup = await prepare('run', argv, io);
      assert.notEqual(typeof setup, 'number', io.err.join(''));
      if (typeof setup === 'number') return;
      setup.kube?.close();
      const lines = io.err
        .join('')
        .split('\n')
        .filter((l) => l !== '');
      const ignoredLines = lines.filter((l) => l.includes('Ignoring cloud-controller-manager flags'));
      const expected = args
        .map((a) => a.replace(/=.*$/, ''))
        .filter((n) =>
          [
            '--use-service-account-credentials',
            '--concurrent-node-syncs',
            '--allow-untagged-cloud',
            '--webhook-secure-port',
          ].includes(n),
        );
      if (expected.length === 0) {
        assert.equal(ignoredLines.length, 0, 'nothing ignored, nothing listed');
      } else {
        assert.equal(ignoredLines.length, 1, lines.join('\n'));
        assert.deepEqual((JSON.parse(ignoredLines[0]!) as { flags: string[] }).flags, expected);
      }
    });
  }

  test('ignored bools do not take the next argument; ignored values do', () => {
    const r = parseFlags([
      '--cloud-provider=memory',
      '--profiling',
      '--cluster-cidr=10.0.0.0/16',
      '--concurrent-service-syncs',
      '5',
      '--tls-min-version=VersionTLS12',
      '--version',
      '--profiling=false',
    ]);
    assert.deepEqual(r.errors, []);
    assert.deepEqual(r.flags.clusterCIDRs, ['10.0.0.0/16']);
    assert.deepEqual(r.flags.ignoredFlags, [
      '--profiling',
      '--concurrent-service-syncs',
      '--tls-min-version',
      '--version',
    ]);
    assert.deepEqual(
      parseFlags(['--cloud-provider=memory', '--cert-dir']).errors[0],
      'flag needs an argument: --cert-dir',
    );
  });

  test('a flag no CCM has is still an error', () => {
    assert.deepEqual(parseFlags(['--cloud-provider=memory', '--cluster-cidr=10.0.0.0/16', '--nope']).errors, [
      'unknown flag: --nope',
    ]);
  });

  test('--controllers: the first item naming the route controller decides, else *', () => {
    const cases: [string[], boolean][] = [
      [['*'], true],
      [[], false],
      [['cloud-node', 'cloud-node-lifecycle'], false],
      [['cloud-node', 'route'], true],
      [['node-route-controller'], true],
      [['*', '-route'], false],
      [['-route', '*'], false],
      [['route', '-route'], true],
      [['*', '-node-route-controller'], false],
      [['*', ' -route'], true],
    ];
    assert.deepEqual(
      parseFlags(['--cloud-provider=memory', '--controllers=cloud-node', '--controllers=-route,*']).flags
        .controllers,
      ['cloud-node', '-route', '*'],
      'a repeated --controllers appends, as pflag string slices do',
    );
    for (const [list, want] of cases) assert.equal(routeControllerEnabled(list), want, list.join(','));
  });

  test('without the route controller the daemon idles and needs no --cluster-cidr', () => {
    const r = parseFlags(['--cloud-provider=memory', '--controllers=cloud-node,cloud-node-lifecycle']);
    assert.deepEqual(r.errors, []);
    assert.equal(r.flags.routesEnabled, false);
    assert.equal(
      idleReason(r.flags),
      'Will not configure cloud provider routes: the route controller is not enabled by --controllers=cloud-node,cloud-node-lifecycle',
    );
    const off = parseFlags(['--cloud-provider=memory', '--configure-cloud-routes=false']);
    assert.equal(
      idleReason(off.flags),
      'Will not configure cloud provider routes, --configure-cloud-routes: false',
    );
  });

  test('--allocate-node-cidrs does not gate routes', () => {
    for (const v of ['true', 'false']) {
      const r = parseFlags([
        '--cloud-provider=memory',
        '--cluster-cidr=10.0.0.0/16',
        `--allocate-node-cidrs=${v}`,
      ]);
      assert.deepEqual(r.errors, []);
      assert.equal(r.flags.allocateNodeCIDRs, v === 'true');
      assert.equal(r.flags.routesEnabled, true);
    }
  });

  test('--logging-format is --log-format under its component-base name', () => {
    const base = ['--cloud-provider=memory', '--cluster-cidr=10.0.0.0/16'];
    assert.equal(parseFlags([...base, '--logging-format=json']).flags.logFormat, 'json');
    assert.equal(parseFlags([...base, '--logging-format=json', '--log-format=json']).flags.logFormat, 'json');
    assert.deepEqual(parseFlags([...base, '--logging-format=xml']).errors, [
      '--logging-format must be one of: text, json',
    ]);
    assert.deepEqual(parseFlags([...base, '--logging-format=json', '--log-format=text']).errors, [
      '--log-format "text" and --logging-format "json" disagree; give one',
    ]);
  });
});
