import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseFlags } from './flags.ts';

const base = ['--cloud-provider=memory', '--cluster-cidr=10.244.0.0/16'];

test('secure serving defaults follow component-base; plain endpoints are opt-in', () => {
  const { flags, errors } = parseFlags(base);
  assert.deepEqual(errors, []);
  assert.deepEqual(flags.serving, {
    securePort: 10258,
    bindAddress: '0.0.0.0',
    tlsCertFile: '',
    tlsPrivateKeyFile: '',
    authenticationKubeconfig: '',
    authorizationKubeconfig: '',
    alwaysAllowPaths: ['/healthz', '/readyz', '/livez'],
  });
  assert.equal(flags.metricsBindAddress, 'disabled');
  assert.equal(flags.healthProbeBindAddress, 'disabled');
});

test('secure serving flags are validated', () => {
  const errorsOf = (...a: string[]) => parseFlags([...base, ...a]).errors;
  assert.deepEqual(errorsOf('--secure-port=0'), []);
  assert.equal(parseFlags([...base, '--secure-port=0']).flags.serving.securePort, 0);
  assert.deepEqual(errorsOf('--secure-port=70000'), [
    'invalid --secure-port "70000": must be between 0 and 65535, inclusive; 0 disables',
  ]);
  assert.deepEqual(errorsOf('--bind-address=localhost'), [
    'invalid --bind-address "localhost": want an IP address',
  ]);
  assert.deepEqual(errorsOf('--tls-cert-file=a.crt'), [
    '--tls-cert-file and --tls-private-key-file must be given together',
  ]);
  assert.deepEqual(errorsOf('--authorization-always-allow-paths=/healthz,metrics,/a*b'), [
    'invalid --authorization-always-allow-paths "metrics": want /path or /prefix/*',
    'invalid --authorization-always-allow-paths "/a*b": want /path or /prefix/*',
  ]);
  assert.deepEqual(
    parseFlags([...base, '--authorization-always-allow-paths=']).flags.serving.alwaysAllowPaths,
    [],
  );
});
