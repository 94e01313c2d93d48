// The secure port's certificate (SPEC R80): --tls-cert-file/--tls-private-key-file
// when given, else a self-signed one made in memory at start, as component-base
// does (GenerateSelfSignedCertKey), so clients can pin it but not verify it
// against a CA. Node has no X.509 writer, so the certificate is built by
// node-forge (zero dependencies, pure JS); the key pair comes from node:crypto
// (native, fast). node-forge is imported only when no files are given: it is
// ~1 MB of JS the daemon otherwise never loads.
import { generateKeyPair, randomBytes, sign, X509Certificate, createPrivateKey } from 'node:crypto';
import { promisify } from 'node:util';
import { hostname } from 'node:os';
import { isIP } from 'node:net';

export interface ServingCert {
  readonly cert: string;
  readonly key: string;
  readonly selfSigned: boolean;
  /** SHA-256 fingerprint of the leaf, as `openssl x509 -fingerprint -sha256` prints it. */
  readonly fingerprint256: string;
}

export class ServingCertError extends Error {
  readonly kind = 'serving-cert' as const;
  override readonly name = 'ServingCertError';
}

const ONE_YEAR_MS = 365 * 24 * 3600 * 1000;

/** Reads and checks the given pair (the key must match the certificate). */
export async function loadServingCert(
  certFile: string,
  keyFile: string,
  readFile: (path: string) => Promise<string>,
): Promise<ServingCert> {
  let cert: string;
  let key: string;
  try {
    [cert, key] = await Promise.all([readFile(certFile), readFile(keyFile)]);
  } catch (err) {
    throw new ServingCertError(`cannot read the serving certificate: ${(err as Error).message}`);
  }
  let x509: X509Certificate;
  try {
    x509 = new X509Certificate(cert);
    if (!x509.checkPrivateKey(createPrivateKey(key)))
      throw new Error('the private key does not match the certificate');
  } catch (err) {
    throw new ServingCertError(`invalid --tls-cert-file/--tls-private-key-file: ${(err as Error).message}`);
  }
  return { cert, key, selfSigned: false, fingerprint256: x509.fingerprint256 };
}

/** A self-signed serving certificate for localhost, the loopback addresses, the host name and `extraHosts`. */
export async function selfSignedServingCert(
  extraHosts: readonly string[] = [],
  now = Date.now(),
): Promise<ServingCert> {
  const { default: forge } = await import('node-forge');
  // Off the event loop (the thread pool): 50–300 ms of key search, while the node list streams in.
  const pair = await promisify(generateKeyPair)('rsa', { modulusLength: 2048 });
  const keyPem = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const pubPem = pair.publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const host = hostname();
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(pubPem);
  // Positive, 16 random bytes (RFC 5280 allows up to 20).
  cert.serialNumber = `01${randomBytes(15).toString('hex')}`;
  cert.validity.notBefore = new Date(now - 60_000);
  cert.validity.notAfter = new Date(now + ONE_YEAR_MS);
  // upstream's subject: <host>@<unix seconds>.
  const subject = [{ name: 'commonName', value: `${host}@${Math.floor(now / 1000)}` }];
  cert.setSubject(subject);
  cert.setIssuer(subject);
  const names = new Set(['localhost', '127.0.0.1', '::1', host, ...extraHosts.filter((h) => h !== '')]);
  const altNames = [...names]
    .filter((n) => n !== '0.0.0.0' && n !== '::')
    .map((n) => (isIP(n) !== 0 ? { type: 7, ip: n } : { type: 2, value: n }));
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', critical: true, digitalSignature: true, keyEncipherment: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames },
  ]);
  // What forge's cert.sign does, with the RSA signature from OpenSSL: forge's is JavaScript
  // (~50 ms of the event loop at start-up, while the node list streams in).
  cert.signatureOid = cert.siginfo.algorithmOid = forge.pki.oids['sha256WithRSAEncryption']!;
  // Exported by forge's x509 module, missing from its type definitions.
  const pki = forge.pki as typeof forge.pki & {
    getTBSCertificate(c: typeof cert): ReturnType<typeof forge.asn1.create>;
  };
  cert.tbsCertificate = pki.getTBSCertificate(cert);
  const tbs = Buffer.from(forge.asn1.toDer(cert.tbsCertificate).getBytes(), 'binary');
  cert.signature = sign('sha256', tbs, pair.privateKey).toString('binary');
  const certPem = forge.pki.certificateToPem(cert);
  return {
    cert: certPem,
    key: keyPem,
    selfSigned: true,
    fingerprint256: new X509Certificate(certPem).fingerprint256,
  };
}
