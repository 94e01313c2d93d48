import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { test } from 'node:test';
import { loadServingCert, selfSignedServingCert } from './serving-cert.ts';

test('a self-signed certificate for loopback, the host and the bind address; its fingerprint is the leaf', async () => {
  const now = Date.UTC(2026, 0, 1);
  const c = await selfSignedServingCert(['10.1.2.3', '0.0.0.0'], now);
  assert.equal(c.selfSigned, true);
  const x = new X509Certificate(c.cert);
  assert.equal(x.fingerprint256, c.fingerprint256);
  assert.ok(x.verify(x.publicKey), 'signed by its own key');
  assert.ok(x.checkPrivateKey((await import('node:crypto')).createPrivateKey(c.key)));
  const sans = x.subjectAltName ?? '';
  for (const want of ['DNS:localhost', 'IP Address:127.0.0.1', 'IP Address:10.1.2.3'])
    assert.ok(sans.includes(want), sans);
  assert.doesNotMatch(sans, /0\.0\.0\.0/, 'a wildcard bind address is no name');
  assert.equal(new Date(x.validTo).getTime() - now, 365 * 24 * 3600 * 1000);
  assert.equal(x.ca, false);
});

test('given files: read and checked; a key of another certificate is refused', async () => {
  const a = await selfSignedServingCert();
  const b = await selfSignedServingCert();
  const files: Record<string, string> = { 'a.crt': a.cert, 'a.key': a.key, 'b.key': b.key };
  const read = (p: string): Promise<string> =>
    p in files ? Promise.resolve(files[p]!) : Promise.reject(new Error(`ENOENT: ${p}`));
  const ok = await loadServingCert('a.crt', 'a.key', read);
  assert.deepEqual([ok.selfSigned, ok.fingerprint256], [false, a.fingerprint256]);
  await assert.rejects(loadServingCert('a.crt', 'b.key', read), {
    kind: 'serving-cert',
    message: /does not match the certificate/,
  });
  await assert.rejects(loadServingCert('missing.crt', 'a.key', read), {
    kind: 'serving-cert',
    message: /cannot read the serving certificate: ENOENT: missing.crt/,
  });
  await assert.rejects(loadServingCert('a.key', 'a.key', read), {
    kind: 'serving-cert',
    message: /^invalid /,
  });
});
