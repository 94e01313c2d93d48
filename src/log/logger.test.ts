import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DaemonLogger, klogLine } from './logger.ts';
import { REDACTED, Redactor } from './redact.ts';

function capture(format: 'text' | 'json', verbosity = 0, env: Record<string, string> = {}) {
  const lines: string[] = [];
  const logger = DaemonLogger.create({
    format,
    verbosity,
    env,
    pid: 4242,
    now: () => Date.UTC(2026, 0, 2, 3, 4, 5, 678),
    out: { write: (l) => lines.push(l) },
  });
  return { logger, lines };
}

test('json: one object per line with level, ts, v, msg and fields', () => {
  const { logger, lines } = capture('json', 2);
  logger.info('Route reconcile finished', { trigger: 'periodic', created: 2 });
  logger.v(2).info('enabled at 2');
  logger.v(3).info('dropped at 3');
  logger.named('leaderelection').error('leaderelection lost');
  assert.equal(lines.length, 3);
  const recs = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(recs[0], {
    level: 'info',
    ts: Date.UTC(2026, 0, 2, 3, 4, 5, 678) / 1000,
    pid: 4242,
    logger: 'cloud-route-controller',
    v: 0,
    trigger: 'periodic',
    created: 2,
    msg: 'Route reconcile finished',
  });
  assert.equal(recs[1]!['v'], 2);
  assert.equal(recs[2]!['level'], 'error');
  assert.equal(recs[2]!['logger'], 'leaderelection');
});

test('text: klog header, message, key=value', () => {
  const { logger, lines } = capture('text');
  logger.warn('careful', { node: 'n1', n: 3, ok: true, level: 'x' });
  assert.equal(lines.length, 1);
  assert.match(
    lines[0]!,
    /^W\d{4} \d\d:\d\d:\d\d\.678000 {4}4242 cloud-route-controller\] careful node="n1" n=3 ok=true level_="x"\n$/,
  );
  assert.equal(capture('text').logger.v(1).enabled, false);
});

test('klogLine severity letters', () => {
  assert.match(klogLine({ level: 'error', ts: 0, msg: 'm' }, 1), /^E/);
  assert.match(klogLine({ level: 'info', ts: 0, msg: 'm' }, 1), /^I/);
});

test('redaction: keys, bearer tokens, secret env values, nested and errors', () => {
  const env = {
    HCLOUD_TOKEN: 'hc-secret-0123456789',
    AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG',
    PATH: '/usr/bin',
  };
  const { logger, lines } = capture('json', 0, env);
  logger.error('call failed: Authorization: Bearer abc.def.ghi with hc-secret-0123456789', {
    token: 'plain',
    headers: { authorization: 'Basic Zm9vOmJhcg==', accept: 'json' },
    err: new Error('signature for wJalrXUtnFEMI/K7MDENG mismatch'),
    list: ['password=hunter22', 'fine'],
    path: '/usr/bin',
  });
  const out = lines.join('');
  for (const secret of [
    'plain',
    'abc.def.ghi',
    'hc-secret-0123456789',
    'Zm9vOmJhcg==',
    'wJalrXUtnFEMI',
    'hunter22',
  ]) {
    assert.ok(!out.includes(secret), `${secret} leaked: ${out}`);
  }
  const rec = JSON.parse(lines[0]!) as Record<string, unknown>;
  assert.equal(rec['token'], REDACTED);
  assert.deepEqual(rec['headers'], { authorization: REDACTED, accept: 'json' });
  assert.equal(rec['err'], `signature for ${REDACTED} mismatch`);
  assert.deepEqual(rec['list'], [`password=${REDACTED}`, 'fine']);
  assert.equal(rec['path'], '/usr/bin');
});

test('redactor ignores short env values and non-secret names', () => {
  const r = new Redactor({ API_TOKEN: 'abc', HOME: '/root/verysecretlooking' });
  assert.equal(r.text('abc /root/verysecretlooking'), 'abc /root/verysecretlooking');
});
