// The control plane's certificates, minted once per process with openssl.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { installHandlers, removeOnExit, run } from './child-processes.ts';

// ------------------------------------------------------------------------------------------------
// certificates (once per process)

export interface Pki {
  dir: string;
  caCrt: string;
  caKey: string;
  saKey: string;
  saPub: string;
  apiserverCrt: string;
  apiserverKey: string;
}

let pkiPromise: Promise<Pki> | undefined;
let serialCounter = 0;

export const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9:._@-]*$/;

export async function mintLeaf(
  pki: { dir: string; caCrt: string; caKey: string },
  dir: string,
  base: string,
  subject: string,
  ext: string,
): Promise<{ crt: string; key: string }> {
  const key = path.join(dir, `${base}.key`);
  const csr = path.join(dir, `${base}.csr`);
  const crt = path.join(dir, `${base}.crt`);
  const extFile = path.join(dir, `${base}.ext`);
  fs.writeFileSync(extFile, ext);
  await run('openssl', [
    'req',
    '-new',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    subject,
    '-keyout',
    key,
    '-out',
    csr,
  ]);
  serialCounter += 1;
  const serial = `0x${randomBytes(8).toString('hex')}${serialCounter.toString(16).padStart(4, '0')}`;
  await run('openssl', [
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    pki.caCrt,
    '-CAkey',
    pki.caKey,
    '-set_serial',
    serial,
    '-days',
    '7',
    '-sha256',
    '-extfile',
    extFile,
    '-out',
    crt,
  ]);
  fs.rmSync(csr, { force: true });
  fs.rmSync(extFile, { force: true });
  fs.chmodSync(key, 0o600);
  return { crt, key };
}

export const CLIENT_EXT =
  'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n';

export function clientSubject(cn: string, groups: string[]): string {
  for (const n of [cn, ...groups]) {
    if (!NAME_RE.test(n))
      throw new Error(`unsupported certificate name ${JSON.stringify(n)} (allowed: ${NAME_RE})`);
  }
  return `/CN=${cn}${groups.map((g) => `/O=${g}`).join('')}`;
}

export async function makePki(): Promise<Pki> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'routectl-pki-'));
  removeOnExit(dir);
  installHandlers();
  const caCrt = path.join(dir, 'ca.crt');
  const caKey = path.join(dir, 'ca.key');
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-days',
    '7',
    '-subj',
    '/CN=routectl-test-ca',
    '-keyout',
    caKey,
    '-out',
    caCrt,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  const ca = { dir, caCrt, caKey };
  const saKey = path.join(dir, 'sa.key');
  const saPub = path.join(dir, 'sa.pub');
  const [server] = await Promise.all([
    mintLeaf(
      ca,
      dir,
      'apiserver',
      '/CN=kube-apiserver',
      'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n',
    ),
    mintLeaf(ca, dir, 'admin', clientSubject('admin', ['system:masters']), CLIENT_EXT),
    mintLeaf(ca, dir, 'route-controller-ts', clientSubject('route-controller-ts', []), CLIENT_EXT),
    mintLeaf(ca, dir, 'route-controller-go', clientSubject('route-controller-go', []), CLIENT_EXT),
    run('openssl', ['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', saKey]).then(
      () => run('openssl', ['pkey', '-in', saKey, '-pubout', '-out', saPub]),
    ),
  ]);
  return { dir, caCrt, caKey, saKey, saPub, apiserverCrt: server.crt, apiserverKey: server.key };
}

export function getPki(): Promise<Pki> {
  pkiPromise ??= makePki().catch((err: unknown) => {
    pkiPromise = undefined;
    throw err;
  });
  return pkiPromise;
}
