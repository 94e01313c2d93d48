// The secure port's certificate (SPEC R80): --tls-cert-file/--tls-private-key-file
// when given, else a self-signed one made in memory at start, as component-base
// does (GenerateSelfSignedCertKey), so clients can pin it but not verify it
// against a CA. Node has no X.509 writer: x509-der.ts encodes the one shape
// needed; the key pair and the signature come from node:crypto.
import { generateKeyPair, randomBytes, X509Certificate, createPrivateKey } from 'node:crypto';
import { promisify } from 'node:util';
import { hostname } from 'node:os';
import { selfSignedCertificatePem } from './x509-der.ts';

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
  // Off the event loop (the thread pool): 50–300 ms of key search, while the node list streams in.
  const pair = await promisify(generateKeyPair)('rsa', { modulusLength: 2048 });
  const host = hostname();
  const names = new Set(['localhost', '127.0.0.1', '::1', host, ...extraHosts.filter((h) => h !== '')]);
  const certPem = selfSignedCertificatePem({
    // upstream's subject: <host>@<unix seconds>.
    commonName: `${host}@${Math.floor(now / 1000)}`,
    names: [...names].filter((n) => n !== '0.0.0.0' && n !== '::'),
    // Positive, 16 random bytes (RFC 5280 allows up to 20).
    serial: Buffer.concat([Buffer.from([1]), randomBytes(15)]),
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + ONE_YEAR_MS),
    publicKey: pair.publicKey,
    privateKey: pair.privateKey,
  });
  return {
    cert: certPem,
    key: pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    selfSigned: true,
    fingerprint256: new X509Certificate(certPem).fingerprint256,
  };
}
