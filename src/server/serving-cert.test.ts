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
  assert.deepEqual(x.keyUsage, ['1.3.6.1.5.5.7.3.1'], 'extended key usage: TLS server');
  assert.match(x.subject, /^CN=.+@1767225600$/);
  assert.equal(x.subject, x.issuer);
});

test('the DER writer: IPv6 names, a validity past 2049 (GeneralizedTime), 16-byte positive serials', async () => {
  const now = Date.UTC(2049, 6, 1);
  for (let i = 0; i < 5; i++) {
    const c = await selfSignedServingCert(['fd00::5', 'example.test'], now);
    const x = new X509Certificate(c.cert);
    assert.ok(x.verify(x.publicKey));
    const sans = x.subjectAltName ?? '';
    for (const want of ['IP Address:0:0:0:0:0:0:0:1', 'IP Address:FD00:0:0:0:0:0:0:5', 'DNS:example.test'])
      assert.ok(sans.includes(want), sans);
    assert.equal(new Date(x.validTo).getTime(), now + 365 * 24 * 3600 * 1000);
    assert.equal(new Date(x.validFrom).getTime(), now - 60_000);
    assert.match(x.serialNumber, /^01[0-9A-F]{30}$/);
  }
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
