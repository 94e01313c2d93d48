// A self-signed X.509 v3 serving certificate, DER-encoded by hand. Why not a
// library: node:crypto makes the key, signs and parses certificates but has no
// certificate writer; node-forge, which this used before, stayed resident for
// the daemon's whole life after this one use (~13 MB of RSS at start-up, more
// than any other single part of a 100-node daemon), and the WebCrypto-based
// writers pull in a dependency-injection framework. The one certificate needed
// here is a fixed shape (RFC 5280 §4.1: CN, validity, SPKI from node:crypto,
// four extensions), and node:crypto's X509Certificate checks every field of it
// in the tests.
import { sign, type KeyObject } from 'node:crypto';
import { parseIP } from '../core/cidr.ts';

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
}

const seq = (...c: Buffer[]): Buffer => tlv(0x30, ...c);
const set = (...c: Buffer[]): Buffer => tlv(0x31, ...c);
const octets = (b: Buffer): Buffer => tlv(0x04, b);
const utf8 = (s: string): Buffer => tlv(0x0c, Buffer.from(s, 'utf8'));
const TRUE = Buffer.from([0x01, 0x01, 0xff]);
const NULL = Buffer.from([0x05, 0x00]);

/** A non-negative INTEGER from big-endian bytes (a leading 0 keeps it positive). */
function uint(bytes: Buffer): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  const b = bytes.subarray(i);
  return tlv(0x02, (b[0]! & 0x80) !== 0 ? Buffer.concat([Buffer.from([0]), b]) : b);
}

function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map(Number);
  const out = [40 * arcs[0]! + arcs[1]!];
  for (const arc of arcs.slice(2)) {
    const groups: number[] = [];
    for (let v = arc; ; v = Math.floor(v / 128)) {
      groups.unshift((v & 0x7f) | (groups.length > 0 ? 0x80 : 0));
      if (v < 128) break;
    }
    out.push(...groups);
  }
  return tlv(0x06, Buffer.from(out));
}

/** RFC 5280 §4.1.2.5: UTCTime through 2049, GeneralizedTime from 2050. */
function time(d: Date): Buffer {
  const iso = d.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits = iso.slice(0, 19).replace(/[-:T]/g, '') + 'Z';
  return d.getUTCFullYear() < 2050
    ? tlv(0x17, Buffer.from(digits.slice(2), 'ascii'))
    : tlv(0x18, Buffer.from(digits, 'ascii'));
}

function ipBytes(text: string): Buffer | undefined {
  const p = parseIP(text);
  if (p === undefined) return undefined;
  const n = p.family === 4 ? 4 : 16;
  const out = Buffer.alloc(n);
  for (let i = n - 1, v = p.ip; i >= 0; i--, v >>= 8n) out[i] = Number(v & 0xffn);
  return out;
}

const extension = (id: string, critical: boolean, value: Buffer): Buffer =>
  seq(oid(id), ...(critical ? [TRUE] : []), octets(value));

export interface SelfSignedSpec {
  readonly commonName: string;
  /** DNS names and IP addresses (IPv4 or IPv6 text) for subjectAltName. */
  readonly names: readonly string[];
  /** Positive, at most 20 bytes (RFC 5280 §4.1.2.2). */
  readonly serial: Buffer;
  readonly notBefore: Date;
  readonly notAfter: Date;
  /** An RSA key pair from node:crypto; the certificate is signed with sha256WithRSAEncryption. */
  readonly publicKey: KeyObject;
  readonly privateKey: KeyObject;
}

/** The certificate in PEM: a leaf for TLS servers (not a CA), issued by itself. */
export function selfSignedCertificatePem(s: SelfSignedSpec): string {
  const sha256WithRSA = seq(oid('1.2.840.113549.1.1.11'), NULL);
  const name = seq(set(seq(oid('2.5.4.3'), utf8(s.commonName))));
  const altNames = s.names.map((n) => {
    const ip = ipBytes(n);
    return ip === undefined ? tlv(0x82, Buffer.from(n, 'ascii')) : tlv(0x87, ip);
  });
  const tbs = seq(
    tlv(0xa0, uint(Buffer.from([2]))), // v3
    uint(s.serial),
    sha256WithRSA,
    name,
    seq(time(s.notBefore), time(s.notAfter)),
    name,
    s.publicKey.export({ type: 'spki', format: 'der' }),
    tlv(
      0xa3,
      seq(
        extension('2.5.29.19', true, seq()), // basicConstraints: cA false
        extension('2.5.29.15', true, Buffer.from([0x03, 0x02, 0x05, 0xa0])), // digitalSignature, keyEncipherment
        extension('2.5.29.37', false, seq(oid('1.3.6.1.5.5.7.3.1'))), // serverAuth
        extension('2.5.29.17', false, seq(...altNames)),
      ),
    ),
  );
  const signature = sign('sha256', tbs, s.privateKey);
  const der = seq(tbs, sha256WithRSA, tlv(0x03, Buffer.from([0]), signature));
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`;
}
