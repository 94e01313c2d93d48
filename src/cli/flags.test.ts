// R60: every validation message, the CIDR order, gate semantics and the
// preflight (provider, files) messages.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { CloudProviderFactory } from '../core/types.ts';
import { FLAGS, parseBindAddress, parseFlags, WATCH_GATE } from './flags.ts';
import { LateNodeLister, preflight, type PreflightDeps } from './preflight.ts';

const BASE = ['--cloud-provider', 'memory', '--cluster-cidr', '10.244.0.0/16'];

function errorsOf(...args: string[]): readonly string[] {
  return parseFlags([...BASE, ...args]).errors;
}

function onlyError(args: string[], message: string): void {
  assert.deepEqual(parseFlags(args).errors, [message]);
}

describe('flag parsing', () => {
  test('defaults follow upstream and SPEC §7.1', () => {
    const r = parseFlags(BASE);
    assert.deepEqual(r.errors, []);
    const f = r.flags;
    assert.equal(f.clusterName, 'kubernetes');
    assert.equal(f.configureCloudRoutes, true);
    assert.equal(f.routeReconciliationPeriodMs, 10_000);
    assert.equal(f.minResyncPeriodMs, 12 * 3_600_000);
    assert.equal(f.kubeApiQps, 20);
    assert.equal(f.kubeApiBurst, 30);
    assert.equal(f.kubeApiContentType, 'protobuf', "upstream's default (R110)");
    assert.equal(f.cloudWriteQps, 'auto', 'adaptive from the provider by default (R68)');
    assert.equal(f.cloudWriteBurst, 0, "the adaptive budget's own burst");
    assert.equal(f.routeCache, true, 'the route cache is on by default (R66)');
    assert.equal(f.leaderElect, true);
    assert.equal(f.leaseDurationMs, 15_000);
    assert.equal(f.renewDeadlineMs, 10_000);
    assert.equal(f.retryPeriodMs, 2_000);
    assert.equal(f.resourceLock, 'leases');
    assert.equal(f.resourceName, 'cloud-route-controller');
    assert.equal(f.resourceNamespace, 'kube-system');
    assert.equal(f.routeResyncPeriodMs, 1_800_000);
    assert.equal(f.dryRun, false);
    assert.equal(f.metricsBindAddress, 'disabled');
    assert.equal(f.healthProbeBindAddress, 'disabled');
    assert.equal(f.serving.securePort, 10258);
    assert.equal(f.logFormat, 'text');
    assert.equal(f.verbosity, 0);
    assert.equal(f.watchBasedReconciliation, false);
    assert.deepEqual([...f.explicit].sort(), ['cloud-provider', 'cluster-cidr']);
  });

  test('--flag=value, --flag value, booleans, -v forms, last wins', () => {
    const r = parseFlags([
      '--cloud-provider=memory',
      '--cluster-cidr',
      ' 10.244.0.0/16 , fd00::/48 ',
      '--dry-run',
      '--leader-elect=false',
      '--configure-cloud-routes=True',
      '-v',
      '3',
      '--kube-api-qps=5.5',
      '--cluster-name=a',
      '--cluster-name',
      'b',
    ]);
    assert.deepEqual(r.errors, []);
    assert.deepEqual(r.flags.clusterCIDRs, ['10.244.0.0/16', 'fd00::/48']);
    assert.equal(r.flags.dryRun, true);
    assert.equal(r.flags.leaderElect, false);
    assert.equal(r.flags.verbosity, 3);
    assert.equal(r.flags.kubeApiQps, 5.5);
    assert.equal(r.flags.clusterName, 'b');
    assert.equal(parseFlags([...BASE, '-v=4']).flags.verbosity, 4);
    assert.equal(parseFlags([...BASE, '-v5']).flags.verbosity, 5);
    assert.equal(parseFlags([...BASE, '--v=6']).flags.verbosity, 6);
    assert.equal(parseFlags([...BASE, '--help']).help, true);
    assert.equal(parseFlags(['-h']).help, true);
  });

  test('unknown flags, positional arguments and missing values are errors', () => {
    assert.deepEqual(errorsOf('--nope=1'), ['unknown flag: --nope']);
    assert.deepEqual(errorsOf('extra'), ['unexpected argument "extra"']);
    assert.deepEqual(errorsOf('-x'), ["unknown shorthand flag: 'x' in -x"]);
    assert.deepEqual(errorsOf('--cluster-name'), ['flag needs an argument: --cluster-name']);
    assert.deepEqual(errorsOf('--leader-elect', 'false'), ['unexpected argument "false"']);
  });

  test('bind addresses', () => {
    assert.equal(parseBindAddress('0'), 'disabled');
    assert.deepEqual(parseBindAddress('127.0.0.1:0'), { host: '127.0.0.1', port: 0 });
    assert.deepEqual(parseBindAddress('[::1]:8080'), { host: '::1', port: 8080 });
    assert.deepEqual(errorsOf('--metrics-bind-address=localhost'), [
      'invalid --metrics-bind-address "localhost": want host:port, :port or 0',
    ]);
    assert.deepEqual(errorsOf('--health-probe-bind-address=:99999'), [
      'invalid --health-probe-bind-address ":99999": want host:port, :port or 0',
    ]);
  });

  test('every flag has a default and help text', () => {
    for (const f of FLAGS) assert.ok(f.help.length > 10, f.name);
  });
});

describe('R60 validation messages', () => {
  test('empty --cluster-cidr with routes on; allowed with routes off', () => {
    onlyError(
      ['--cloud-provider', 'memory'],
      '--cluster-cidr must be set when --configure-cloud-routes is true',
    );
    assert.deepEqual(parseFlags(['--cloud-provider', 'memory', '--configure-cloud-routes=false']).errors, []);
  });

  test('unparsable CIDR element', () => {
    onlyError(
      ['--cloud-provider', 'memory', '--cluster-cidr', '10.244.0.0/16,banana'],
      'invalid --cluster-cidr: failed to parse cidr value:"banana" with error:invalid CIDR address: banana',
    );
  });

  test('parse errors win over family and count checks (upstream order)', () => {
    onlyError(
      ['--cloud-provider', 'memory', '--cluster-cidr', '10.0.0.0/8,10.1.0.0/16,x/1'],
      'invalid --cluster-cidr: failed to parse cidr value:"x/1" with error:invalid CIDR address: x/1',
    );
  });

  test('three IPv4 CIDRs get the dual-stack message', () => {
    onlyError(
      ['--cloud-provider', 'memory', '--cluster-cidr', '10.0.0.0/16,10.1.0.0/16,10.2.0.0/16'],
      'invalid --cluster-cidr: len of ClusterCIDRs==3 and they are not configured as dual stack (at least one from each IPFamily)',
    );
  });

  test('two CIDRs of one family', () => {
    onlyError(
      ['--cloud-provider', 'memory', '--cluster-cidr', 'fd00::/48,fd01::/48'],
      'invalid --cluster-cidr: len of ClusterCIDRs==2 and they are not configured as dual stack (at least one from each IPFamily)',
    );
  });

  test('more than two CIDRs of both families', () => {
    onlyError(
      ['--cloud-provider', 'memory', '--cluster-cidr', '10.0.0.0/16,fd00::/48,10.1.0.0/16'],
      'invalid --cluster-cidr: length of clusterCIDRs is:3 more than max allowed of 2',
    );
  });

  test('host bits are cleared with a warning', () => {
    const r = parseFlags(['--cloud-provider', 'memory', '--cluster-cidr', '10.244.1.7/16']);
    assert.deepEqual(r.errors, []);
    assert.deepEqual(r.flags.clusterCIDRs, ['10.244.0.0/16']);
    assert.deepEqual(r.warnings, ['--cluster-cidr 10.244.1.7/16 has host bits set; using 10.244.0.0/16']);
  });

  test('periods', () => {
    assert.deepEqual(errorsOf('--route-reconciliation-period=0s'), [
      '--route-reconciliation-period must be greater than 0',
    ]);
    assert.deepEqual(errorsOf('--min-resync-period=-1h'), ['--min-resync-period must be greater than 0']);
    assert.deepEqual(errorsOf('--route-resync-period=9s'), [
      '--route-resync-period must be 0 or at least 10s',
    ]);
    assert.deepEqual(errorsOf('--route-resync-period=0'), []);
    assert.deepEqual(errorsOf('--route-resync-period=10s'), []);
  });

  test('leases', () => {
    assert.deepEqual(errorsOf('--leader-elect-lease-duration=10s'), [
      'leaseDuration must be greater than renewDeadline',
    ]);
    assert.deepEqual(errorsOf('--leader-elect-retry-period=9s'), [
      'renewDeadline must be greater than retryPeriod*1.2',
    ]);
    assert.deepEqual(errorsOf('--leader-elect-resource-lock=endpoints'), [
      '--leader-elect-resource-lock must be "leases"',
    ]);
    // Not checked when leader election is off, like component-base.
    assert.deepEqual(errorsOf('--leader-elect=false', '--leader-elect-lease-duration=1s'), []);
    assert.deepEqual(
      errorsOf(
        '--leader-elect-lease-duration=3s',
        '--leader-elect-renew-deadline=2s',
        '--leader-elect-retry-period=500ms',
      ),
      [],
    );
  });

  test('cloud write budget', () => {
    const f = (...a: string[]) => parseFlags([...BASE, ...a]).flags;
    assert.equal(f('--cloud-write-qps=20').cloudWriteBurst, 40, 'default burst: two seconds of writes');
    assert.equal(f('--cloud-write-qps=0.2').cloudWriteBurst, 1);
    assert.equal(f('--cloud-write-qps=20', '--cloud-write-burst=5').cloudWriteBurst, 5);
    assert.equal(f('--cloud-write-qps=1.5').cloudWriteQps, 1.5);
    assert.equal(f('--cloud-write-qps=0').cloudWriteQps, 0, 'unpaced, like upstream');
    assert.equal(f('--cloud-write-qps=auto', '--cloud-write-burst=7').cloudWriteBurst, 7);
    assert.equal(f('--route-cache=false').routeCache, false);
    assert.deepEqual(errorsOf('--cloud-write-qps=-1'), ['--cloud-write-qps must be auto, 0 or greater']);
    assert.deepEqual(errorsOf('--cloud-write-qps=fast'), [
      'invalid --cloud-write-qps "fast": strconv.ParseFloat: parsing "fast": invalid syntax',
    ]);
    assert.deepEqual(errorsOf('--cloud-write-qps=1e999'), [
      'invalid --cloud-write-qps "1e999": strconv.ParseFloat: parsing "1e999": invalid syntax',
    ]);
    assert.deepEqual(errorsOf('--cloud-write-burst=-3'), ['--cloud-write-burst must be 0 or greater']);
    assert.deepEqual(errorsOf('--cloud-write-burst=2.5'), [
      'invalid --cloud-write-burst "2.5": strconv.ParseInt: parsing "2.5": invalid syntax',
    ]);
  });

  test('qps and burst', () => {
    assert.deepEqual(errorsOf('--kube-api-qps=0'), ['--kube-api-qps must be greater than 0']);
    assert.deepEqual(errorsOf('--kube-api-burst=-1'), ['--kube-api-burst must be greater than 0']);
    assert.deepEqual(errorsOf('--kube-api-qps=fast'), [
      'invalid --kube-api-qps "fast": strconv.ParseFloat: parsing "fast": invalid syntax',
    ]);
    assert.deepEqual(errorsOf('--kube-api-burst=1.5'), [
      'invalid --kube-api-burst "1.5": strconv.ParseInt: parsing "1.5": invalid syntax',
    ]);
  });

  test('feature gates: unknown, invalid value, AllAlpha, AllBeta', () => {
    assert.deepEqual(errorsOf('--feature-gates=Foo=true'), ['unrecognized feature gate: Foo']);
    assert.deepEqual(errorsOf(`--feature-gates=${WATCH_GATE}=maybe`), [
      `invalid value of ${WATCH_GATE}=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax`,
    ]);
    const gate = (v: string): boolean =>
      parseFlags([...BASE, `--feature-gates=${v}`]).flags.watchBasedReconciliation;
    assert.equal(gate(`${WATCH_GATE}=true`), true);
    assert.equal(gate('AllAlpha=true'), true);
    assert.equal(gate(`AllAlpha=true,${WATCH_GATE}=false`), false);
    assert.equal(gate(`${WATCH_GATE}=false,AllAlpha=true`), false);
    assert.equal(gate('AllBeta=true'), false);
    assert.equal(gate('AllAlpha=false'), false);
    assert.equal(parseFlags(BASE).flags.watchBasedReconciliation, false);
  });

  test('missing provider and bad log format', () => {
    onlyError(['--cluster-cidr', '10.244.0.0/16'], '--cloud-provider must be set');
    assert.deepEqual(errorsOf('--log-format=yaml'), ['--log-format must be one of: text, json']);
  });

  test('bad durations, booleans and verbosity', () => {
    assert.deepEqual(errorsOf('--route-reconciliation-period=10'), [
      'invalid --route-reconciliation-period "10": time: invalid duration "10"',
    ]);
    assert.deepEqual(errorsOf('--leader-elect-lease-duration=soon'), [
      'invalid --leader-elect-lease-duration "soon": time: invalid duration "soon"',
    ]);
    assert.deepEqual(errorsOf('--dry-run=yes'), [
      'invalid --dry-run "yes": strconv.ParseBool: parsing "yes": invalid syntax',
    ]);
    assert.deepEqual(errorsOf('-v=loud'), [
      'invalid --v "loud": strconv.ParseInt: parsing "loud": invalid syntax',
    ]);
  });

  test('--kube-api-content-type takes the two media types, nothing else (R110)', () => {
    assert.equal(
      parseFlags([...BASE, '--kube-api-content-type=application/json']).flags.kubeApiContentType,
      'json',
    );
    assert.equal(
      parseFlags([...BASE, '--kube-api-content-type=application/vnd.kubernetes.protobuf']).flags
        .kubeApiContentType,
      'protobuf',
    );
    assert.deepEqual(parseFlags([...BASE, '--kube-api-content-type=application/yaml']).errors, [
      '--kube-api-content-type must be one of: application/vnd.kubernetes.protobuf, application/json',
    ]);
  });

  test('all errors are reported together', () => {
    const r = parseFlags(['--cluster-cidr=x', '--kube-api-qps=0', '--log-format=xml', '--bogus']);
    assert.deepEqual(r.errors, [
      'unknown flag: --bogus',
      '--cloud-provider must be set',
      'invalid --cluster-cidr: failed to parse cidr value:"x" with error:invalid CIDR address: x',
      '--kube-api-qps must be greater than 0',
      '--log-format must be one of: text, json',
    ]);
  });
});

describe('R60 preflight messages', () => {
  const files: Record<string, string> = { '/kc': 'apiVersion: v1', '/cloud.yaml': 'x: 1' };
  const routesFactory: CloudProviderFactory = () => ({
    name: 'fake',
    routes: () => ({
      listRoutes: async () => [],
      createRoute: async () => {},
      deleteRoute: async () => {},
    }),
  });
  const deps: PreflightDeps = {
    readFile: async (p) => {
      const t = files[p];
      if (t === undefined) throw new Error(`ENOENT: no such file or directory, open '${p}'`);
      return t;
    },
    resolveProvider: async (name) => {
      if (name === 'fake') return routesFactory;
      if (name === 'noroutes') return () => ({ name: 'noroutes', routes: () => undefined });
      if (name === 'broken')
        return () => {
          throw new Error('bad config');
        };
      throw new Error(`unknown cloud provider "${name}"; registered: fake, noroutes`);
    },
  };
  const run = async (...args: string[]): Promise<readonly string[]> =>
    (await preflight(parseFlags(args).flags, new LateNodeLister(), deps)).errors;

  test('happy path builds the provider and its routes', async () => {
    const r = await preflight(
      parseFlags(['--cloud-provider=fake', '--cloud-config=/cloud.yaml', '--kubeconfig=/kc']).flags,
      new LateNodeLister(),
      deps,
    );
    assert.deepEqual(r.errors, []);
    assert.equal(r.provider?.name, 'fake');
    assert.ok(r.routes);
  });

  test('unknown provider', async () => {
    assert.deepEqual(await run('--cloud-provider=gce'), [
      'unknown cloud provider "gce"; registered: fake, noroutes',
    ]);
  });

  test('missing provider yields no preflight error (reported by parseFlags)', async () => {
    assert.deepEqual(await run(), []);
  });

  test('unreadable cloud config', async () => {
    assert.deepEqual(await run('--cloud-provider=fake', '--cloud-config=/missing.yaml'), [
      "couldn't open cloud provider configuration /missing.yaml: ENOENT: no such file or directory, open '/missing.yaml'",
    ]);
  });

  test('routes unsupported, only when routes are configured', async () => {
    assert.deepEqual(await run('--cloud-provider=noroutes'), [
      '--configure-cloud-routes is set, but cloud provider does not support routes',
    ]);
    assert.deepEqual(await run('--cloud-provider=noroutes', '--configure-cloud-routes=false'), []);
  });

  test('provider factory failure', async () => {
    assert.deepEqual(await run('--cloud-provider=broken'), [
      'cloud provider could not be initialized: bad config',
    ]);
  });

  test('unreadable kubeconfig', async () => {
    assert.deepEqual(await run('--cloud-provider=fake', '--kubeconfig=/nope'), [
      `invalid --kubeconfig "/nope": ENOENT: no such file or directory, open '/nope'`,
    ]);
  });

  test('the real registry names the built-in providers', async () => {
    const { registerBuiltinProviders } = await import('../cloud/builtin.ts');
    const { resolveCloudProvider } = await import('../cloud/registry.ts');
    registerBuiltinProviders();
    const r = await preflight(parseFlags(['--cloud-provider=nimbus']).flags, new LateNodeLister(), {
      readFile: deps.readFile,
      resolveProvider: resolveCloudProvider,
    });
    assert.deepEqual(r.errors, [
      'unknown cloud provider "nimbus"; registered: aws, azure, gce, hcloud, linux, memory, openstack',
    ]);
  });
});
