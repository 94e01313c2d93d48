import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, test } from 'node:test';
import { VirtualClock } from '../core/clock.ts';
import { loadKubeConfig } from './client-node-config.ts';
import { KubeClient } from './kube-client.ts';
import { KubeConfigError, loadKubeConnection } from './kubeconfig.ts';

describe('loadKubeConnection', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kubeconfig-test-'));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = (
    name: string,
    server: string,
    user: object = { token: 't' },
    cluster: object = {},
  ): string => {
    const p = path.join(dir, name);
    fs.writeFileSync(
      p,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name, cluster: { server, ...cluster } }],
        users: [{ name, user }],
        contexts: [{ name, context: { cluster: name, user: name } }],
        'current-context': name,
      }),
    );
    return p;
  };

  test('--kubeconfig wins over KUBECONFIG; KUBECONFIG files merge, first wins; --master overrides', () => {
    const a = file('a', 'https://a.example:6443');
    const b = file('b', 'https://b.example:6443');
    assert.equal(
      loadKubeConnection({ kubeconfig: a, env: { KUBECONFIG: b } }).server,
      'https://a.example:6443',
    );
    const merged = loadKubeConnection({
      env: { KUBECONFIG: [b, path.join(dir, 'missing'), a].join(path.delimiter) },
    });
    assert.equal(merged.server, 'https://b.example:6443');
    assert.equal(merged.origin, `KUBECONFIG ${[b, path.join(dir, 'missing'), a].join(path.delimiter)}`);
    const c = loadKubeConnection({ kubeconfig: a, master: 'https://override:443', env: {} });
    assert.equal(c.server, 'https://override:443');
    assert.equal(c.token, 't');
    assert.equal(c.clientNode, undefined);
  });

  test('YAML with relative certificate paths and inline data', () => {
    fs.writeFileSync(path.join(dir, 'ca.crt'), 'CA-PEM');
    fs.writeFileSync(path.join(dir, 'tok'), 'file-token\n');
    const p = path.join(dir, 'y.yaml');
    fs.writeFileSync(
      p,
      [
        'apiVersion: v1',
        'kind: Config',
        'current-context: x',
        'clusters:',
        '- name: c',
        '  cluster: {server: "https://h:6443", certificate-authority: ca.crt, tls-server-name: api.internal}',
        'users:',
        `- name: u`,
        `  user: {client-certificate-data: ${Buffer.from('CERT').toString('base64')}, client-key-data: ${Buffer.from('KEY').toString('base64')}, tokenFile: tok}`,
        'contexts:',
        '- name: x',
        '  context: {cluster: c, user: u}',
      ].join('\n'),
    );
    const c = loadKubeConnection({ kubeconfig: p, env: {} });
    assert.equal(c.ca?.toString(), 'CA-PEM');
    assert.equal(c.cert?.toString(), 'CERT');
    assert.equal(c.key?.toString(), 'KEY');
    assert.equal(c.tlsServerName, 'api.internal');
    assert.equal(c.tokenFile, path.join(dir, 'tok'));
  });

  test('exec and auth-provider users and proxies are delegated to client-node', () => {
    const e = file('e', 'https://e:6443', {
      exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'aws' },
    });
    assert.deepEqual(loadKubeConnection({ kubeconfig: e, env: {} }).clientNode, { kubeconfig: e, env: {} });
    const p = file('p', 'https://p:6443', { token: 't' }, { 'proxy-url': 'http://proxy:3128' });
    assert.ok(loadKubeConnection({ kubeconfig: p, env: {} }).clientNode);
  });

  test('an unreadable or invalid kubeconfig names the path', () => {
    const missing = path.join(dir, 'nope.yaml');
    assert.throws(
      () => loadKubeConnection({ kubeconfig: missing, env: {} }),
      (e: unknown) =>
        e instanceof KubeConfigError && e.message.includes(missing) && e.message.includes('--kubeconfig'),
    );
    assert.throws(
      () => loadKubeConnection({ env: { KUBECONFIG: missing } }),
      (e: unknown) =>
        e instanceof KubeConfigError && e.message.includes(missing) && e.message.includes('KUBECONFIG'),
    );
    const bad = path.join(dir, 'bad.yaml');
    fs.writeFileSync(bad, 'clusters: [ {');
    assert.throws(
      () => loadKubeConnection({ kubeconfig: bad, env: {} }),
      (e: unknown) => e instanceof KubeConfigError && e.message.includes(bad),
    );
    const noctx = path.join(dir, 'noctx.yaml');
    fs.writeFileSync(noctx, 'apiVersion: v1\nkind: Config\n');
    assert.throws(() => loadKubeConnection({ kubeconfig: noctx, env: {} }), /no current context/);
    const cert = file('cert', 'https://c:6443', { 'client-certificate': 'gone.crt' });
    assert.throws(
      () => loadKubeConnection({ kubeconfig: cert, env: {} }),
      (e: unknown) => e instanceof KubeConfigError && e.message.includes(path.join(dir, 'gone.crt')),
    );
  });

  test('in-cluster from the service account directory; nothing at all is a clear error', () => {
    const sa = path.join(dir, 'sa');
    fs.mkdirSync(sa, { recursive: true });
    fs.writeFileSync(path.join(sa, 'token'), 'tok');
    fs.writeFileSync(path.join(sa, 'ca.crt'), 'ca');
    const c = loadKubeConnection({
      env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' },
      serviceAccountDir: sa,
    });
    assert.equal(c.server, 'https://[fd00::1]:443');
    assert.equal(c.tokenFile, path.join(sa, 'token'));
    assert.equal(c.ca?.toString(), 'ca');
    assert.throws(
      () => loadKubeConnection({ env: {}, serviceAccountDir: path.join(dir, 'none') }),
      /no kubeconfig/,
    );
    const m = loadKubeConnection({
      env: {},
      master: 'http://127.0.0.1:8080',
      serviceAccountDir: path.join(dir, 'none'),
    });
    assert.equal(m.server, 'http://127.0.0.1:8080');
  });

  test('the client-node KubeConfig loader makes the same choice', () => {
    const a = file('ka', 'https://a.example:6443');
    const kc = loadKubeConfig({ kubeconfig: a, master: 'https://m:1', env: {} });
    assert.equal(kc.getCurrentCluster()?.server, 'https://m:1');
    assert.throws(() => loadKubeConfig({ kubeconfig: path.join(dir, 'nope'), env: {} }), KubeConfigError);
  });

  test('an exec credential plug-in is run through client-node, loaded on demand', async () => {
    const auths: (string | undefined)[] = [];
    const server = http.createServer((req, res) => {
      auths.push(req.headers.authorization);
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    const cred = JSON.stringify({
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      status: { token: 'exec-token' },
    });
    const kcFile = file(
      'exec',
      `http://127.0.0.1:${port}`,
      {
        exec: {
          apiVersion: 'client.authentication.k8s.io/v1',
          command: process.execPath,
          args: ['-e', `process.stdout.write(${JSON.stringify(cred)})`],
          interactiveMode: 'Never',
        },
      },
      { 'insecure-skip-tls-verify': true },
    );
    const c = new KubeClient(loadKubeConnection({ kubeconfig: kcFile, env: {} }));
    try {
      await c.request('/');
      assert.deepEqual(auths, ['Bearer exec-token']);
    } finally {
      c.close();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  test('a token file is re-read after a minute (rotated service-account tokens)', async () => {
    const tok = path.join(dir, 'rotating');
    fs.writeFileSync(tok, 'one');
    const auths: (string | undefined)[] = [];
    const server = http.createServer((req, res) => {
      auths.push(req.headers.authorization);
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const clock = new VirtualClock();
    const { port } = server.address() as { port: number };
    const c = new KubeClient(
      { server: `http://127.0.0.1:${port}`, tokenFile: tok, insecureSkipTLSVerify: false, origin: 't' },
      { clock },
    );
    try {
      await c.request('/');
      fs.writeFileSync(tok, 'two');
      await c.request('/');
      await clock.advance(60_000);
      await c.request('/');
      fs.rmSync(tok);
      await clock.advance(60_000);
      await c.request('/'); // unreadable now: the last good token is kept
      assert.deepEqual(auths, ['Bearer one', 'Bearer one', 'Bearer two', 'Bearer two']);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
