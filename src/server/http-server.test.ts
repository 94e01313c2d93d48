import assert from 'node:assert/strict';
import http from 'node:http';
import { test } from 'node:test';
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { RouteControllerStatus } from '../controller/route-controller.ts';
import { RouteControllerMetrics } from '../controller/metrics.ts';
import { MemoryLogger } from '../core/ports.ts';
import { parseBindAddress } from './bind-address.ts';
import { Health } from './health.ts';
import { healthHandler, HttpEndpoint, metricsHandler, ServerStartError } from './http-server.ts';

function get(port: number, path: string, agent?: http.Agent): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent: agent ?? false }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on('error', reject);
  });
}

test('metrics and probes are served on loopback and stop cleanly', async () => {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const metrics = new RouteControllerMetrics(registry);
  metrics.routeSync.inc({ trigger: 'periodic', outcome: 'noop' });
  let now = 1_000_000;
  let shutting = false;
  let st: RouteControllerStatus = { synced: false, reconcileStartedAt: undefined, lastProgressAt: now };
  const health = new Health({
    now: () => now,
    shuttingDown: () => shutting,
    controller: () => st,
    stallAfterMs: 360_000,
  });
  const logger = new MemoryLogger();
  const m = new HttpEndpoint('metrics', parseBindAddress('127.0.0.1:0'), metricsHandler(registry), logger);
  const h = new HttpEndpoint('health probes', parseBindAddress('127.0.0.1:0'), healthHandler(health), logger);
  const mAddr = await m.start();
  const hAddr = await h.start();
  assert.ok(mAddr && hAddr);
  assert.equal(mAddr.address, '127.0.0.1');
  const keepAlive = new http.Agent({ keepAlive: true });
  try {
    const met = await get(mAddr.port, '/metrics', keepAlive);
    assert.equal(met.status, 200);
    assert.match(met.body, /route_controller_route_sync_total\{trigger="periodic",outcome="noop"\} 1/);
    assert.match(met.body, /process_cpu_user_seconds_total/);
    assert.equal((await get(mAddr.port, '/other')).status, 404);

    // Not synced: not ready, but alive.
    assert.equal((await get(hAddr.port, '/readyz')).status, 500);
    assert.match((await get(hAddr.port, '/readyz')).body, /\[-\]informer-sync failed/);
    assert.equal((await get(hAddr.port, '/healthz')).status, 200);
    st = { ...st, synced: true };
    assert.deepEqual(await get(hAddr.port, '/readyz'), { status: 200, body: 'ok' });
    assert.match((await get(hAddr.port, '/readyz?verbose')).body, /\[\+\]informer-sync ok/);

    // A reconcile without progress for longer than the stall limit fails liveness.
    st = { synced: true, reconcileStartedAt: now, lastProgressAt: now };
    now += 300_000;
    assert.equal((await get(hAddr.port, '/livez')).status, 200);
    now += 61_000;
    assert.equal((await get(hAddr.port, '/livez')).status, 500);
    assert.equal((await get(hAddr.port, '/healthz')).status, 500);
    st = { ...st, lastProgressAt: now };
    assert.equal((await get(hAddr.port, '/livez')).status, 200);

    shutting = true;
    assert.equal((await get(hAddr.port, '/readyz')).status, 500);
    assert.equal((await get(hAddr.port, '/livez')).status, 500);
  } finally {
    await m.stop();
    await h.stop();
    keepAlive.destroy();
  }
  await assert.rejects(get(mAddr.port, '/metrics'), /ECONNREFUSED/);
  await assert.rejects(get(hAddr.port, '/readyz'), /ECONNREFUSED/);
  assert.ok(logger.messages().includes('Serving metrics'));
});

test('disabled endpoints do not listen; a taken port is a typed error', async () => {
  const logger = new MemoryLogger();
  const off = new HttpEndpoint('metrics', 'disabled', async () => ({ status: 200, body: '' }), logger);
  assert.equal(await off.start(), undefined);
  await off.stop();
  const a = new HttpEndpoint(
    'a',
    parseBindAddress('127.0.0.1:0'),
    async () => ({ status: 200, body: '' }),
    logger,
  );
  const addr = await a.start();
  assert.ok(addr);
  const b = new HttpEndpoint(
    'b',
    { host: '127.0.0.1', port: addr.port },
    async () => ({ status: 200, body: '' }),
    logger,
  );
  await assert.rejects(b.start(), ServerStartError);
  await a.stop();
});
