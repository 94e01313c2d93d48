import assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { httpFetch } from './http-fetch.ts';

async function server(t: TestContext, handler: http.RequestListener): Promise<string> {
  const s = http.createServer(handler);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => s.close(() => r())));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
}

describe('httpFetch (the transport of the REST plug-ins)', () => {
  it('sends method, headers and a sized body; answers status, headers and text', async (t) => {
    let seen: { method?: string; auth?: string; length?: string; body: string } = { body: '' };
    const url = await server(t, (req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen = {
          method: req.method,
          auth: req.headers.authorization,
          length: req.headers['content-length'],
          body,
        };
        res.writeHead(422, 'Unprocessable', {
          'RateLimit-Remaining': '7',
          'Content-Type': 'application/json',
        });
        res.end('{"error":{"code":"invalid_input"}}');
      });
    });
    const res = await httpFetch()(`${url}/v1/networks/1/actions/add_route`, {
      method: 'POST',
      headers: { Authorization: 'Bearer t' },
      body: '{"destination":"10.244.1.0/24"}',
    });
    assert.deepEqual(seen, {
      method: 'POST',
      auth: 'Bearer t',
      length: '31',
      body: '{"destination":"10.244.1.0/24"}',
    });
    assert.equal(res.ok, false);
    assert.equal(res.status, 422);
    assert.equal(res.statusText, 'Unprocessable');
    assert.equal(res.headers.get('ratelimit-remaining'), '7');
    assert.equal(res.headers.get('RateLimit-Reset'), null);
    assert.equal(await res.text(), '{"error":{"code":"invalid_input"}}');
  });

  it('a refused connection rejects like fetch: "fetch failed" with the socket error as cause', async () => {
    // Nothing listens on a port once its server is closed.
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const free = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    await assert.rejects(httpFetch()(`http://127.0.0.1:${free}/v1/networks/1`, {}), (err: Error) => {
      assert.equal(err.message, 'fetch failed');
      assert.equal((err.cause as { code?: string }).code, 'ECONNREFUSED');
      return true;
    });
  });

  it('an abort ends a request the server never answers', async (t) => {
    let arrived!: () => void;
    const gotRequest = new Promise<void>((r) => (arrived = r));
    const url = await server(t, () => arrived());
    const ac = new AbortController();
    const call = httpFetch()(`${url}/v1/actions/1`, { signal: ac.signal });
    await gotRequest;
    ac.abort();
    await assert.rejects(call, (err: Error) => {
      assert.equal(err.message, 'fetch failed');
      assert.equal((err.cause as Error).name, 'AbortError');
      return true;
    });
  });

  it('socket inactivity past the timeout rejects instead of waiting for ever', async (t) => {
    const url = await server(t, () => {});
    await assert.rejects(httpFetch(50)(`${url}/v1/servers`, {}), (err: Error) => {
      assert.match((err.cause as Error).message, /no response activity for 50 ms/);
      return true;
    });
  });
});
