// KubeClient and kubeconfig loading against a local plain-HTTP server.
import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import { VirtualClock } from '../core/clock.ts';
import { KubeApiError, KubeClient, KubeRequestError, apiErrorFrom, parseRetryAfter } from './kube-client.ts';
import type { KubeConnection } from './kube-connection.ts';
import { encodeStatus } from './testing/k8s-proto.ts';
import { RequestRateLimiter } from '../core/rate-limiter.ts';

function httpConfig(server: string): KubeConnection {
  return { server, token: 'secret-token', insecureSkipTLSVerify: false, origin: 'test' };
}

describe('KubeClient over HTTP', () => {
  let server: http.Server;
  let base = '';
  const seen: { method: string; url: string; headers: http.IncomingHttpHeaders; body: string }[] = [];

  before(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        const url = req.url ?? '';
        if (url.startsWith('/ok')) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"kind":"Node","metadata":{"name":"a"}}');
        } else if (url.startsWith('/throttled')) {
          res.writeHead(429, { 'retry-after': '3' });
          res.end(
            JSON.stringify({ kind: 'Status', code: 429, reason: 'TooManyRequests', message: 'slow down' }),
          );
        } else if (url.startsWith('/watch-ok')) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.write('{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{"type":"BOOK');
          setTimeout(() => res.end('MARK","object":{"metadata":{"resourceVersion":"9"}}}\n'), 20);
        } else if (url.startsWith('/watch-forbidden')) {
          res.writeHead(403);
          res.end(
            JSON.stringify({ kind: 'Status', code: 403, reason: 'Forbidden', message: 'nodes is forbidden' }),
          );
        } else if (url.startsWith('/watch-broken')) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.write('{"type":"ADDED","object":{}}\n');
          setTimeout(() => res.socket?.destroy(), 20);
        } else if (url.startsWith('/watch-hang')) {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.write('\n');
        } else {
          res.writeHead(404);
          res.end('not json');
        }
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const addr = server.address() as { port: number };
    base = `http://127.0.0.1:${addr.port}`;
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  test('requests carry the bearer token and JSON bodies; errors map to KubeApiError', async () => {
    const c = new KubeClient(httpConfig(base));
    try {
      assert.deepEqual(await c.requestJson('/ok'), { kind: 'Node', metadata: { name: 'a' } });
      await c.request('/ok/patch', {
        method: 'PATCH',
        body: { a: 1 },
        contentType: 'application/strategic-merge-patch+json',
      });
      const p = seen.at(-1)!;
      assert.equal(p.headers.authorization, 'Bearer secret-token');
      assert.equal(p.headers['content-type'], 'application/strategic-merge-patch+json');
      assert.equal(p.body, '{"a":1}');
      await assert.rejects(c.request('/throttled'), (e: unknown) => {
        assert.ok(e instanceof KubeApiError);
        assert.equal(e.statusCode, 429);
        assert.equal(e.reason, 'TooManyRequests');
        assert.equal(e.retryAfterMs, 3000);
        assert.equal(e.message, 'slow down');
        return true;
      });
      await assert.rejects(
        c.request('/missing'),
        (e: unknown) => e instanceof KubeApiError && e.statusCode === 404,
      );
    } finally {
      c.close();
    }
  });

  test('watch streams lines across chunks and resolves on a clean end', async () => {
    const c = new KubeClient(httpConfig(base));
    const lines: unknown[] = [];
    await c.watch('/watch-ok', new AbortController().signal, (l) => lines.push(JSON.parse(l)));
    assert.deepEqual(lines, [
      { type: 'ADDED', object: { metadata: { name: 'a' } } },
      { type: 'BOOKMARK', object: { metadata: { resourceVersion: '9' } } },
    ]);
    c.close();
  });

  test('requests reuse pooled connections; watches get their own; idle ones can be dropped', async () => {
    const c = new KubeClient(httpConfig(base));
    const ports = new Set<number>();
    const sockets = (): number => ports.size;
    const onConnection = (s: Socket): void => {
      ports.add(s.remotePort ?? 0);
    };
    server.on('connection', onConnection);
    try {
      await c.request('/ok');
      await c.request('/ok');
      assert.equal(sockets(), 1, 'keep-alive');
      await c.watch('/watch-ok', new AbortController().signal, () => {});
      assert.equal(sockets(), 2, 'a watch opens a fresh connection');
      await c.watch('/watch-ok', new AbortController().signal, () => {});
      assert.equal(sockets(), 3, 'and does not return it to the pool');
      await c.request('/ok');
      assert.equal(sockets(), 3);
      c.resetIdleConnections();
      await c.request('/ok');
      assert.equal(sockets(), 4, 'idle connections were dropped');
    } finally {
      server.off('connection', onConnection);
      c.close();
    }
  });

  test('watch: error status, broken connection and abort are told apart', async () => {
    const c = new KubeClient(httpConfig(base));
    await assert.rejects(
      c.watch('/watch-forbidden', new AbortController().signal, () => {}),
      (e: unknown) => {
        return e instanceof KubeApiError && e.statusCode === 403 && e.reason === 'Forbidden';
      },
    );
    await assert.rejects(
      c.watch('/watch-broken', new AbortController().signal, () => {}),
      KubeRequestError,
    );
    const ac = new AbortController();
    const hanging = c.watch('/watch-hang', ac.signal, () => {});
    setTimeout(() => ac.abort(), 30);
    await assert.rejects(hanging, (e: unknown) => e instanceof Error && e.name === 'AbortError');
    await assert.rejects(
      c.watch('/watch-hang', AbortSignal.abort(), () => {}),
      (e: unknown) => e instanceof Error && e.name === 'AbortError',
    );
    c.close();
  });

  test('requestStream feeds 2xx bodies chunk by chunk; a throwing sink rejects with its error', async () => {
    const c = new KubeClient(httpConfig(base));
    const chunks: Buffer[] = [];
    const res = await c.requestStream('/ok', {}, (b) => chunks.push(b));
    assert.equal(res.status, 200);
    assert.equal(Buffer.concat(chunks).toString(), '{"kind":"Node","metadata":{"name":"a"}}');
    const boom = new Error('bad item');
    await assert.rejects(
      c.requestStream('/ok', {}, () => {
        throw boom;
      }),
      (e: unknown) => e === boom,
    );
    await assert.rejects(
      c.requestStream('/throttled', {}, () => assert.fail('error bodies are not streamed')),
      (e: unknown) => e instanceof KubeApiError && e.statusCode === 429,
    );
    c.close();
  });

  test('a client-node KubeConfig works too (its auth, our keep-alive)', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromClusterAndUser(
      { name: 'c', server: base, skipTLSVerify: true },
      { name: 'u', token: 'kc-token' },
    );
    const c = new KubeClient(kc);
    assert.deepEqual(await c.requestJson('/ok'), { kind: 'Node', metadata: { name: 'a' } });
    assert.equal(seen.at(-1)!.headers.authorization, 'Bearer kc-token');
    assert.equal(await c.clientNodeConfig(), kc);
    c.close();
  });

  test('basic auth and no credentials', async () => {
    const c = new KubeClient({
      server: base,
      username: 'u',
      password: 'p',
      insecureSkipTLSVerify: false,
      origin: 't',
    });
    await c.request('/ok');
    assert.equal(seen.at(-1)!.headers.authorization, `Basic ${Buffer.from('u:p').toString('base64')}`);
    const anon = new KubeClient({ server: base, insecureSkipTLSVerify: false, origin: 't' });
    await anon.request('/ok');
    assert.equal(seen.at(-1)!.headers.authorization, undefined);
  });

  test('a refused connection is a KubeRequestError without a status', async () => {
    const c = new KubeClient(httpConfig('http://127.0.0.1:1'));
    await assert.rejects(
      c.request('/x'),
      (e: unknown) => e instanceof KubeRequestError && !('statusCode' in e),
    );
  });
});

describe('rate limiter and error parsing', () => {
  test('qps/burst: a burst passes at once, then one request per 1/qps', async () => {
    const clock = new VirtualClock();
    const l = new RequestRateLimiter(clock, 2, 3);
    const done: number[] = [];
    for (let i = 0; i < 6; i++) void l.wait().then(() => done.push(clock.now()));
    await clock.advance(0);
    assert.equal(done.length, 3);
    await clock.advance(500);
    assert.equal(done.length, 4);
    await clock.advance(1000);
    assert.equal(done.length, 6);
  });

  test('an aborted wait gives its token back', async () => {
    const clock = new VirtualClock();
    const l = new RequestRateLimiter(clock, 1, 1);
    await l.wait();
    const ac = new AbortController();
    const p = l.wait(ac.signal);
    ac.abort();
    await assert.rejects(p, (e: unknown) => e instanceof Error && e.name === 'AbortError');
    await clock.advance(1000);
    assert.equal(l.bucket.available(), 1);
  });

  test('Retry-After: seconds or HTTP date; Status details as fallback', () => {
    assert.equal(parseRetryAfter('2'), 2000);
    assert.equal(parseRetryAfter(new Date(10_000).toUTCString(), 4000), 6000);
    assert.equal(parseRetryAfter('soon'), undefined);
    const e = apiErrorFrom(500, {}, JSON.stringify({ message: 'x', details: { retryAfterSeconds: 4 } }));
    assert.equal(e.retryAfterMs, 4000);
    assert.equal(
      apiErrorFrom(502, {}, '<html>bad gateway</html>').message,
      'HTTP 502 Bad Gateway: <html>bad gateway</html>',
    );
  });

  test('a protobuf Status (R110) gives the same message, reason and retry time as its JSON', () => {
    const status = {
      status: 'Failure',
      message: 'too many requests, please try again later',
      reason: 'TooManyRequests',
      code: 429,
      details: { retryAfterSeconds: 3 },
    };
    const proto = apiErrorFrom(
      429,
      { 'content-type': 'application/vnd.kubernetes.protobuf' },
      encodeStatus(status),
    );
    const json = apiErrorFrom(
      429,
      { 'content-type': 'application/json' },
      Buffer.from(JSON.stringify(status)),
    );
    for (const e of [proto, json]) {
      assert.equal(e.statusCode, 429);
      assert.equal(e.message, status.message);
      assert.equal(e.reason, 'TooManyRequests');
      assert.equal(e.retryAfterMs, 3000);
    }
    // Labelled protobuf but not: the status code and the raw text, never a throw.
    const odd = apiErrorFrom(
      503,
      { 'content-type': 'application/vnd.kubernetes.protobuf' },
      Buffer.from('oops'),
    );
    assert.equal(odd.message, 'HTTP 503 Service Unavailable: oops');
  });
});
