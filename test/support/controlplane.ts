/**
 * Real-component control plane for integration tests: etcd + kube-apiserver on loopback
 * (shared TESTENV.md sections 5 and 6). Binaries come from `scripts/testenv.sh build`.
 *
 * Only node built-ins are used. Child output goes to files in the instance directory (never pipes).
 */
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { sleep, startProcess, terminate, type Proc } from './child-processes.ts';
import {
  freePort,
  httpJson,
  httpsRequest,
  tail,
  writeKubeconfig,
  type KubeUser,
  type TlsIdentity,
} from './kube-http.ts';
import { CLIENT_EXT, clientSubject, getPki, mintLeaf } from './pki.ts';
import { binaryVersion, testenvBinaries } from './testenv-binaries.ts';

export { apiRequest, kubeconfigIdentity, type ApiResponse, type TlsIdentity } from './kube-http.ts';
export {
  ETCD_VERSION,
  KUBE_VERSION,
  requireTestenv,
  testenvBinaries,
  type TestenvBinaries,
} from './testenv-binaries.ts';

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
  /**
   * etcd's watch progress notification interval (etcd's default: 10 min). The watch cache's RV
   * moves without events of its own only on these, or on the progress requests of consistent
   * reads, which the apiserver makes only once it has found that etcd supports them (an
   * asynchronous check with a backoff of up to 15 s after every start). Ignored with kine.
   */
  etcdProgressNotifyMs?: number;
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
            ...(opts.etcdProgressNotifyMs === undefined
              ? []
              : [
                  // Renamed in etcd 3.6; the 3.5 name still works there but warns.
                  `--${/^3\.[0-5]\./.test(etcdVersion) ? 'experimental-' : ''}watch-progress-notify-interval=${opts.etcdProgressNotifyMs}ms`,
                ]),
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
