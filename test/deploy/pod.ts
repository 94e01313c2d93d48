/**
 * The kubelet's part for the chart's Deployment: runs its pod template as a container with podman,
 * exactly as the template says (image, args, env, volumes, securityContext, memory limit), in a
 * network namespace of its own. With `hostNetwork: true` (the chart's default) that namespace
 * stands for the host network of the node the pod landed on: one per pod, as the scheduler puts
 * two pods that want one host port (a host-network pod's container ports are) on two nodes.
 * The pod reaches the control plane, moto and the API fakes on their loopback ports through
 * Unix-socket forwarders (test/deploy/forward.ts), and the test reaches the pod's container
 * ports the same way, as `kubectl port-forward` would.
 */
import { execFile, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { startProcess, terminate, type Proc } from '../support/child-processes.ts';
import { apiRequest, freePort } from '../support/kube-http.ts';
import { forward } from './forward.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

type Obj = Record<string, unknown>;
export interface Container {
  name: string;
  image: string;
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[];
  envFrom?: { secretRef?: { name: string }; configMapRef?: { name: string } }[];
  ports?: { name?: string; containerPort: number }[];
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
  resources?: { limits?: { memory?: string } };
  securityContext?: {
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    capabilities?: { drop?: string[]; add?: string[] };
    runAsUser?: number;
  };
}
export interface PodTemplate {
  spec: {
    serviceAccountName: string;
    hostNetwork?: boolean;
    dnsPolicy?: string;
    terminationGracePeriodSeconds?: number;
    securityContext?: { runAsUser?: number; runAsGroup?: number; runAsNonRoot?: boolean };
    containers: Container[];
    volumes?: {
      name: string;
      configMap?: { name: string; items?: { key: string; path: string }[] };
      secret?: { secretName: string; items?: { key: string; path: string }[] };
      emptyDir?: { sizeLimit?: string };
    }[];
  };
}

let podmanEnvCache: string | undefined;

/** The podman environment of scripts/image.sh (containers.conf: runc, no ulimits). */
export function podmanEnv(): NodeJS.ProcessEnv {
  podmanEnvCache ??= execFileSync('bash', [path.join(ROOT, 'scripts', 'image.sh'), 'env'], {
    encoding: 'utf8',
  });
  const out = podmanEnvCache;
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const line of out.split('\n')) {
    const m = /^([A-Z_]+)=(.*)$/.exec(line.trim());
    if (m !== null) env[m[1]!] = m[2]!;
  }
  return env;
}

export function exec(cmd: string, args: string[], env?: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      cmd,
      args,
      { encoding: 'utf8', timeout: 120_000, env, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${cmd} ${args.join(' ')}: ${err.message}\n${stderr}`));
        else resolve(stdout);
      },
    );
  });
}

export const podman = (args: string[]): Promise<string> => exec('podman', args, podmanEnv());

async function getObject(kubeconfig: string, p: string): Promise<Obj> {
  const r = await apiRequest(kubeconfig, 'GET', p);
  if (r.status !== 200) throw new Error(`GET ${p}: ${r.status} ${r.body}`);
  return JSON.parse(r.body) as Obj;
}

/** Files of a ConfigMap or Secret volume: key (or item path) → content. */
async function volumeFiles(
  kubeconfig: string,
  ns: string,
  v: NonNullable<PodTemplate['spec']['volumes']>[number],
): Promise<Map<string, Buffer>> {
  const files = new Map<string, Buffer>();
  if (v.configMap !== undefined) {
    const cm = await getObject(kubeconfig, `/api/v1/namespaces/${ns}/configmaps/${v.configMap.name}`);
    const data = (cm['data'] ?? {}) as Record<string, string>;
    const items = v.configMap.items ?? Object.keys(data).map((k) => ({ key: k, path: k }));
    for (const i of items) files.set(i.path, Buffer.from(data[i.key] ?? ''));
  } else if (v.secret !== undefined) {
    const s = await getObject(kubeconfig, `/api/v1/namespaces/${ns}/secrets/${v.secret.secretName}`);
    const data = (s['data'] ?? {}) as Record<string, string>;
    const items = v.secret.items ?? Object.keys(data).map((k) => ({ key: k, path: k }));
    for (const i of items) files.set(i.path, Buffer.from(data[i.key] ?? '', 'base64'));
  }
  return files;
}

async function secretValue(
  kubeconfig: string,
  ns: string,
  name: string,
  key?: string,
): Promise<Record<string, string>> {
  const s = await getObject(kubeconfig, `/api/v1/namespaces/${ns}/secrets/${name}`);
  const data = (s['data'] ?? {}) as Record<string, string>;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(data))
    if (key === undefined || k === key) out[k] = Buffer.from(v, 'base64').toString();
  return out;
}

/** A ServiceAccount token from the TokenRequest API, as the kubelet projects it (1 h). */
export async function serviceAccountToken(
  kubeconfig: string,
  ns: string,
  sa: string,
  seconds = 3600,
): Promise<string> {
  const r = await apiRequest(kubeconfig, 'POST', `/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: seconds },
  });
  if (r.status !== 201) throw new Error(`TokenRequest ${ns}/${sa}: ${r.status} ${r.body}`);
  return (JSON.parse(r.body) as { status: { token: string } }).status.token;
}

export interface PodOptions {
  /** Admin kubeconfig: reads ConfigMaps and Secrets and requests the token, as the kubelet does. */
  adminKubeconfig: string;
  namespace: string;
  template: PodTemplate;
  /** Pod name (the container's hostname too). */
  name: string;
  /** The apiserver's loopback port (KUBERNETES_SERVICE_HOST=127.0.0.1, _PORT=this). */
  apiserverPort: number;
  caCrt: string;
  /** Further loopback ports of the host the pod reaches on the same numbers (moto, API fakes). */
  hostPorts: number[];
}

export interface Pod {
  readonly name: string;
  /** The JTI of the pod's ServiceAccount token (the audit log's credential ID). */
  readonly credentialId: string;
  /** Host loopback port → the container's port (port-forward). */
  readonly ports: ReadonlyMap<number, number>;
  logs(): Promise<string>;
  /** Exit code once exited, else undefined. */
  exitCode(): Promise<number | undefined>;
  /** SIGTERM, then SIGKILL after the pod's terminationGracePeriodSeconds; removes everything. */
  stop(): Promise<void>;
}

let podCounter = 0;

/**
 * The pod's resolver. `Default` (the node's resolv.conf, as the chart sets it) is podman's own
 * default; this harness has no cluster DNS, so ClusterFirst (the default without hostNetwork) and
 * ClusterFirstWithHostNet would leave the pod unable to resolve a name: refused.
 */
function checkDnsPolicy(spec: PodTemplate['spec']): void {
  const policy = spec.dnsPolicy ?? 'ClusterFirst';
  if (policy !== 'Default') {
    throw new Error(`dnsPolicy ${policy}: this harness has no cluster DNS (only Default is modelled)`);
  }
}

export async function startPod(o: PodOptions): Promise<Pod> {
  const c = o.template.spec.containers[0]!;
  checkDnsPolicy(o.template.spec);
  podCounter += 1;
  const netns = `crc-pod-${process.pid}-${podCounter}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `routectl-pod-${o.name}-`));
  fs.chmodSync(dir, 0o755);
  const cleanups: (() => Promise<void>)[] = [];
  const cleanup = async (): Promise<void> => {
    for (const f of cleanups.reverse()) await f().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await exec('ip', ['netns', 'add', netns]);
    cleanups.push(() => exec('ip', ['netns', 'delete', netns]).then(() => undefined));
    await exec('ip', ['netns', 'exec', netns, 'ip', 'link', 'set', 'lo', 'up']);

    // Loopback ports: host → pod (control plane, clouds) and pod → host (container ports).
    const sock = path.join(dir, 'sock');
    fs.mkdirSync(sock);
    const specs: string[] = [];
    for (const port of [o.apiserverPort, ...o.hostPorts]) {
      const server = await forward(
        { kind: 'unix', path: path.join(sock, `h${port}`) },
        { kind: 'tcp', host: '127.0.0.1', port },
      );
      cleanups.push(() => new Promise((r) => server.close(() => r())));
      specs.push(`tcp:127.0.0.1:${port}=>unix:${path.join(sock, `h${port}`)}`);
    }
    const ports = new Map<number, number>();
    for (const p of c.ports ?? [])
      specs.push(`unix:${path.join(sock, `c${p.containerPort}`)}=>tcp:127.0.0.1:${p.containerPort}`);
    const fwdLog = path.join(dir, 'forward.log');
    const node = path.join(ROOT, 'node_modules', 'node', 'bin', 'node');
    const fwd: Proc = startProcess(
      'ip',
      ['netns', 'exec', netns, node, path.join(import.meta.dirname, 'forward.ts'), ...specs],
      fwdLog,
    );
    cleanups.push(() => terminate(fwd, 2000));
    await waitForFile(fwdLog, /^ready$/m, 10_000, () => fwd.exitInfo !== undefined);
    for (const p of c.ports ?? []) {
      const hostPort = await freePort();
      const server = await forward(
        { kind: 'tcp', host: '127.0.0.1', port: hostPort },
        { kind: 'unix', path: path.join(sock, `c${p.containerPort}`) },
      );
      cleanups.push(() => new Promise((r) => server.close(() => r())));
      ports.set(p.containerPort, hostPort);
    }

    // Volumes, as the kubelet lays them out; files readable by the pod's user (0644).
    const run: string[] = [
      'run',
      '-d',
      '--pull=never',
      `--name=${o.name}`,
      `--hostname=${o.name}`,
      `--network=ns:/run/netns/${netns}`,
      '--log-driver=k8s-file',
    ];
    const sa = path.join(dir, 'serviceaccount');
    fs.mkdirSync(sa, { mode: 0o755 });
    const token = await serviceAccountToken(
      o.adminKubeconfig,
      o.namespace,
      o.template.spec.serviceAccountName,
    );
    fs.writeFileSync(path.join(sa, 'token'), token, { mode: 0o644 });
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString()) as {
      jti?: string;
    };
    fs.copyFileSync(o.caCrt, path.join(sa, 'ca.crt'));
    fs.chmodSync(path.join(sa, 'ca.crt'), 0o644);
    fs.writeFileSync(path.join(sa, 'namespace'), o.namespace, { mode: 0o644 });
    run.push(`--volume=${sa}:/var/run/secrets/kubernetes.io/serviceaccount:ro`);
    const volumes = new Map((o.template.spec.volumes ?? []).map((v) => [v.name, v]));
    for (const m of c.volumeMounts ?? []) {
      const v = volumes.get(m.name);
      if (v === undefined) throw new Error(`volumeMount ${m.name}: no such volume`);
      if (v.emptyDir !== undefined) {
        const size =
          v.emptyDir.sizeLimit === undefined
            ? ''
            : `,size=${v.emptyDir.sizeLimit.replace(/i$/, '').toLowerCase()}`;
        run.push(`--tmpfs=${m.mountPath}:rw,mode=1777${size}`);
        continue;
      }
      const vdir = path.join(dir, 'volumes', m.name);
      fs.mkdirSync(vdir, { recursive: true, mode: 0o755 });
      for (const [file, content] of await volumeFiles(o.adminKubeconfig, o.namespace, v)) {
        fs.writeFileSync(path.join(vdir, file), content, { mode: 0o644 });
      }
      run.push(`--volume=${vdir}:${m.mountPath}${m.readOnly === true ? ':ro' : ''}`);
    }

    // Environment: the in-cluster client's two variables, then the container's own.
    const env: Record<string, string> = {
      KUBERNETES_SERVICE_HOST: '127.0.0.1',
      KUBERNETES_SERVICE_PORT: String(o.apiserverPort),
    };
    for (const f of c.envFrom ?? []) {
      if (f.secretRef !== undefined)
        Object.assign(env, await secretValue(o.adminKubeconfig, o.namespace, f.secretRef.name));
    }
    for (const e of c.env ?? []) {
      if (e.value !== undefined) env[e.name] = e.value;
      const ref = e.valueFrom?.secretKeyRef;
      if (ref !== undefined)
        env[e.name] = (await secretValue(o.adminKubeconfig, o.namespace, ref.name, ref.key))[ref.key] ?? '';
    }
    const envFile = path.join(dir, 'env');
    fs.writeFileSync(
      envFile,
      Object.entries(env)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n') + '\n',
      { mode: 0o600 },
    );
    run.push(`--env-file=${envFile}`);

    // securityContext: pod level, then the container's.
    const psc = o.template.spec.securityContext ?? {};
    const csc = c.securityContext ?? {};
    const uid = csc.runAsUser ?? psc.runAsUser;
    if (psc.runAsNonRoot === true && (uid === undefined || uid === 0))
      throw new Error('runAsNonRoot without a non-zero runAsUser');
    if (uid !== undefined) run.push(`--user=${uid}:${psc.runAsGroup ?? uid}`);
    if (csc.readOnlyRootFilesystem === true) run.push('--read-only', '--read-only-tmpfs=false');
    for (const cap of csc.capabilities?.drop ?? []) run.push(`--cap-drop=${cap}`);
    for (const cap of csc.capabilities?.add ?? []) run.push(`--cap-add=${cap}`);
    if (csc.allowPrivilegeEscalation === false) run.push('--security-opt=no-new-privileges');
    const mem = c.resources?.limits?.memory;
    if (mem !== undefined) run.push(`--memory=${mem.replace(/i$/, '').toLowerCase()}`);
    run.push(c.image, ...(c.args ?? []));
    await podman(run);
    cleanups.push(async () => {
      await podman(['rm', '-f', '-t', '0', o.name]).catch(() => undefined);
    });
    return {
      name: o.name,
      credentialId: claims.jti ?? '',
      ports,
      logs: () => podman(['logs', o.name]),
      async exitCode() {
        const state = (
          await podman(['inspect', '--format', '{{.State.Status}} {{.State.ExitCode}}', o.name])
        ).trim();
        const [status, code] = state.split(' ');
        return status === 'exited' ? Number(code) : undefined;
      },
      async stop() {
        const grace = o.template.spec.terminationGracePeriodSeconds ?? 30;
        await podman(['stop', '-t', String(grace), o.name]).catch(() => undefined);
        if (process.env.KEEP_TESTENV === '1')
          fs.writeFileSync(
            path.join(os.tmpdir(), `${o.name}.log`),
            await podman(['logs', o.name]).catch(String),
          );
        await cleanup();
      },
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

async function waitForFile(file: string, re: RegExp, timeoutMs: number, dead: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    if (re.test(text)) return;
    if (dead() || Date.now() > deadline)
      throw new Error(`${file}: no ${re} within ${timeoutMs} ms:\n${text}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** True if something accepts connections on the host loopback port. */
export function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}
