// A routed test network of real Linux network namespaces: one router and N
// nodes, each node joined to the router by a veth pair, with a "pod" address in
// the node's pod CIDR and a default route via the router. The router has no
// route to any pod CIDR until someone (the linux provider) adds one, so pod to
// pod reachability measures exactly the routes under test.
//
//   node i  eth0 172.30.i.2/24  fd00:30:i::2/64  ── vn<i> 172.30.i.1/24  fd00:30:i::1/64  router
//           pod0 10.244.i.1/24  fd00:244:0:i::1/64
//
// Needs root (CAP_NET_ADMIN + CAP_SYS_ADMIN), iproute2, iputils ping and sysctl:
// scripts/netns-prereqs.sh installs them. Every namespace name starts with a
// prefix unique to this run; teardown() removes them, an exit/signal handler
// catches what a crashed test left, and the next run sweeps namespaces of dead
// processes.
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Node } from '../../src/core/types.ts';
import { testenvBinaries } from './controlplane.ts';

export interface ExecResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface NodeHost {
  /** 1-based; also the third octet / hextet of its addresses. */
  readonly index: number;
  /** Kubernetes node name. */
  readonly name: string;
  readonly ns: string;
  readonly internalIPv4: string;
  readonly internalIPv6: string;
  readonly routerIPv4: string;
  readonly routerIPv6: string;
  /** The router's end of this node's veth pair. */
  readonly routerIf: string;
  readonly podCIDRv4: string;
  readonly podCIDRv6: string;
  readonly podIPv4: string;
  readonly podIPv6: string;
}

export interface Topology {
  readonly prefix: string;
  /** Router namespace name: give it as `netns` to the linux provider. */
  readonly router: string;
  readonly nodes: readonly NodeHost[];
  readonly clusterCIDRv4: string;
  readonly clusterCIDRv6: string;
  /** Runs argv inside a namespace (`ip netns exec ns ...`); rejects on non-zero exit unless check: false. */
  exec(
    ns: string,
    argv: readonly string[],
    opts?: { check?: boolean; timeoutMs?: number },
  ): Promise<ExecResult>;
  /** `ip -n ns <args>`; resolves stdout, rejects on failure. */
  ip(ns: string, args: readonly string[]): Promise<string>;
  /** One echo request with a 1 s wait; `from` picks the source address (`ping -I`). */
  ping(fromNs: string, addr: string, opts?: { from?: string }): Promise<boolean>;
  /** Ping from `from`'s pod address to `to`'s pod address, so both directions need pod routes. */
  podPing(from: NodeHost, to: NodeHost, family: 4 | 6): Promise<boolean>;
  /** Node objects as a kubelet + IPAM would publish them: InternalIPs and pod CIDRs of both families. */
  k8sNodes(): Node[];
  /** Deletes every namespace of this topology; safe to call twice. */
  teardown(): Promise<void>;
}

export interface TopologyOptions {
  /** Number of node namespaces, 1..250. */
  nodes: number;
  /** Namespace name prefix; default `crt-<pid>-<random>-`. */
  prefix?: string;
  /** Kubernetes node names; default node-<i>. */
  nodeName?: (index: number) => string;
}

const PREFIX_RE = /^crt-(\d+)-[0-9a-f]+-/;
const live = new Set<string>(); // namespaces this process created and has not deleted

function run(cmd: string, args: readonly string[], timeoutMs = 30_000): Promise<ExecResult> {
  return new Promise((resolve) => {
    execFile(cmd, args, { encoding: 'utf8', timeout: timeoutMs }, (err, stdout, stderr) => {
      // Shell conventions: 127 for a missing command, 124 for a timeout.
      const code = !err ? 0 : typeof err.code === 'number' ? err.code : err.code === 'ENOENT' ? 127 : 124;
      resolve({ code, stdout, stderr: err && stderr === '' ? err.message : stderr });
    });
  });
}

async function must(cmd: string, args: readonly string[], timeoutMs?: number): Promise<ExecResult> {
  const r = await run(cmd, args, timeoutMs);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.code}): ${r.stderr.trim()}`);
  return r;
}

function deleteNamespacesSync(): void {
  for (const ns of live) {
    try {
      execFileSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
    } catch {
      // Already gone, or teardown raced us: nothing left to do at exit.
    }
  }
  live.clear();
}

let handlersInstalled = false;
function installExitHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', deleteNamespacesSync);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    const onSignal = (): void => {
      deleteNamespacesSync();
      process.off(sig, onSignal);
      // Re-raise so the default action (or another handler) still ends the process.
      if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
    };
    process.on(sig, onSignal);
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function listNamespaces(): Promise<string[]> {
  const r = await run('ip', ['netns', 'list']);
  return r.stdout
    .split('\n')
    .map((l) => l.split(' ')[0] ?? '')
    .filter((n) => n !== '');
}

/** Deletes namespaces left by earlier runs whose process is gone (SIGKILL, crash). */
export async function sweepStaleNamespaces(): Promise<string[]> {
  const stale = (await listNamespaces()).filter((n) => {
    const m = PREFIX_RE.exec(n);
    return m !== null && Number(m[1]) !== process.pid && !pidAlive(Number(m[1]));
  });
  for (const ns of stale) await run('ip', ['netns', 'del', ns]);
  return stale;
}

export function uniquePrefix(): string {
  return `crt-${process.pid}-${randomBytes(3).toString('hex')}-`;
}

/**
 * Whether this machine can build a topology: root, ip, ping, sysctl, and
 * namespaces with veth pairs. Resolves a reason instead of throwing.
 */
export async function netnsSupport(): Promise<{ ok: true } | { ok: false; reason: string }> {
  if (process.platform !== 'linux') return { ok: false, reason: `not Linux (${process.platform})` };
  if (process.getuid?.() !== 0)
    return { ok: false, reason: 'not root (network namespaces need CAP_SYS_ADMIN)' };
  for (const [cmd, arg] of [
    ['ip', '-V'],
    ['ping', '-V'],
    ['sysctl', '--version'],
  ] as const) {
    const r = await run(cmd, [arg]);
    if (r.code === 127) {
      return { ok: false, reason: `${cmd} not found; run scripts/netns-prereqs.sh` };
    }
  }
  const probe = `${uniquePrefix()}probe`;
  live.add(probe);
  installExitHandlers();
  try {
    const add = await run('ip', ['netns', 'add', probe]);
    if (add.code !== 0) return { ok: false, reason: `ip netns add failed: ${add.stderr.trim()}` };
    const veth = await run('ip', ['-n', probe, 'link', 'add', 'p0', 'type', 'veth', 'peer', 'name', 'p1']);
    if (veth.code !== 0) return { ok: false, reason: `veth pairs unsupported: ${veth.stderr.trim()}` };
    return { ok: true };
  } finally {
    await run('ip', ['netns', 'del', probe]);
    live.delete(probe);
  }
}

const sysctlsEverywhere = [
  // Addresses are usable at once, without waiting for duplicate address detection.
  'net.ipv6.conf.all.accept_dad=0',
  'net.ipv6.conf.default.accept_dad=0',
  'net.ipv6.conf.all.disable_ipv6=0',
  'net.ipv6.conf.default.disable_ipv6=0',
];
const sysctlsRouter = [
  'net.ipv4.ip_forward=1',
  'net.ipv6.conf.all.forwarding=1',
  // Pod source addresses arrive on node links; reverse-path filtering must not
  // decide reachability, the routes under test must.
  'net.ipv4.conf.all.rp_filter=0',
  'net.ipv4.conf.default.rp_filter=0',
];

function host(prefix: string, i: number, name: string): NodeHost {
  return {
    index: i,
    name,
    ns: `${prefix}n${i}`,
    internalIPv4: `172.30.${i}.2`,
    internalIPv6: `fd00:30:${i}::2`,
    routerIPv4: `172.30.${i}.1`,
    routerIPv6: `fd00:30:${i}::1`,
    routerIf: `vn${i}`,
    podCIDRv4: `10.244.${i}.0/24`,
    podCIDRv6: `fd00:244:0:${i}::/64`,
    podIPv4: `10.244.${i}.1`,
    podIPv6: `fd00:244:0:${i}::1`,
  };
}

async function addNamespace(ns: string, sysctls: readonly string[]): Promise<void> {
  live.add(ns);
  await must('ip', ['netns', 'add', ns]);
  await must('ip', ['-n', ns, 'link', 'set', 'lo', 'up']);
  await must('ip', ['netns', 'exec', ns, 'sysctl', '-q', '-w', ...sysctls]);
}

/** A pod-side interface: dummy where the kernel has it, else a veth pair kept inside the node. */
async function addPodInterface(ns: string): Promise<void> {
  const dummy = await run('ip', ['-n', ns, 'link', 'add', 'pod0', 'type', 'dummy']);
  if (dummy.code !== 0) {
    await must('ip', ['-n', ns, 'link', 'add', 'pod0', 'type', 'veth', 'peer', 'name', 'pod0p']);
    await must('ip', ['-n', ns, 'link', 'set', 'pod0p', 'up']);
  }
  await must('ip', ['-n', ns, 'link', 'set', 'pod0', 'up']);
}

async function addNode(router: string, n: NodeHost): Promise<void> {
  await addNamespace(n.ns, sysctlsEverywhere);
  const r = (args: string[]): Promise<ExecResult> => must('ip', ['-n', router, ...args]);
  const h = (args: string[]): Promise<ExecResult> => must('ip', ['-n', n.ns, ...args]);
  await r(['link', 'add', n.routerIf, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', n.ns]);
  await r(['addr', 'add', `${n.routerIPv4}/24`, 'dev', n.routerIf]);
  await r(['-6', 'addr', 'add', `${n.routerIPv6}/64`, 'dev', n.routerIf, 'nodad']);
  await r(['link', 'set', n.routerIf, 'up']);
  await h(['addr', 'add', `${n.internalIPv4}/24`, 'dev', 'eth0']);
  await h(['-6', 'addr', 'add', `${n.internalIPv6}/64`, 'dev', 'eth0', 'nodad']);
  await h(['link', 'set', 'eth0', 'up']);
  await h(['route', 'add', 'default', 'via', n.routerIPv4]);
  await h(['-6', 'route', 'add', 'default', 'via', n.routerIPv6]);
  await addPodInterface(n.ns);
  await h(['addr', 'add', `${n.podIPv4}/24`, 'dev', 'pod0']);
  await h(['-6', 'addr', 'add', `${n.podIPv6}/64`, 'dev', 'pod0', 'nodad']);
}

export async function createTopology(opts: TopologyOptions): Promise<Topology> {
  if (!Number.isInteger(opts.nodes) || opts.nodes < 1 || opts.nodes > 250) {
    throw new Error(`createTopology: nodes must be 1..250, got ${opts.nodes}`);
  }
  installExitHandlers();
  await sweepStaleNamespaces();
  const prefix = opts.prefix ?? uniquePrefix();
  const router = `${prefix}r`;
  const nodes = Array.from({ length: opts.nodes }, (_, k) =>
    host(prefix, k + 1, opts.nodeName?.(k + 1) ?? `node-${k + 1}`),
  );
  const mine = [router, ...nodes.map((n) => n.ns)];

  const teardown = async (): Promise<void> => {
    for (const ns of mine.toReversed()) {
      if (!live.has(ns)) continue;
      await run('ip', ['netns', 'del', ns]);
      live.delete(ns);
    }
  };

  try {
    await addNamespace(router, [...sysctlsEverywhere, ...sysctlsRouter]);
    for (const n of nodes) await addNode(router, n);
  } catch (err) {
    await teardown();
    throw err;
  }

  const exec: Topology['exec'] = async (ns, argv, o = {}) => {
    const r = await run('ip', ['netns', 'exec', ns, ...argv], o.timeoutMs);
    if (o.check !== false && r.code !== 0) {
      throw new Error(`[${ns}] ${argv.join(' ')} failed (${r.code}): ${r.stderr.trim()}`);
    }
    return r;
  };
  const ping: Topology['ping'] = async (fromNs, addr, o = {}) => {
    const src = o.from === undefined ? [] : ['-I', o.from];
    const r = await run(
      'ip',
      ['netns', 'exec', fromNs, 'ping', '-n', '-q', '-c1', '-W1', ...src, addr],
      10_000,
    );
    return r.code === 0;
  };

  return {
    prefix,
    router,
    nodes,
    clusterCIDRv4: '10.244.0.0/16',
    clusterCIDRv6: 'fd00:244::/48',
    exec,
    ip: async (ns, args) => (await must('ip', ['-n', ns, ...args])).stdout,
    ping,
    podPing: (from, to, family) =>
      family === 4
        ? ping(from.ns, to.podIPv4, { from: from.podIPv4 })
        : ping(from.ns, to.podIPv6, { from: from.podIPv6 }),
    k8sNodes: () =>
      nodes.map((n) => ({
        metadata: { name: n.name, uid: `${prefix}uid-${n.index}`, creationTimestamp: new Date(0) },
        spec: { podCIDRs: [n.podCIDRv4, n.podCIDRv6] },
        status: {
          addresses: [
            { type: 'InternalIP', address: n.internalIPv4 },
            { type: 'InternalIP', address: n.internalIPv6 },
            { type: 'Hostname', address: n.name },
          ],
        },
      })),
    teardown,
  };
}

/**
 * Why a linux test on network namespaces and a real kube-apiserver cannot run here (printed as
 * `# SKIP <what>`), or false; under CI=true never a skip: a missing piece fails the test instead.
 */
export async function netnsClusterSkip(what: string): Promise<string | false> {
  if (process.env.CI === 'true') return false;
  const support = await netnsSupport();
  const skip = !support.ok
    ? `needs root and network namespaces (${support.reason}); run scripts/netns-prereqs.sh as root`
    : testenvBinaries() === undefined
      ? 'needs kube-apiserver and etcd: run scripts/testenv.sh build'
      : false;
  if (skip) console.log(`# SKIP ${what}: ${skip}`);
  return skip;
}

/** Under CI=true nothing skips: fails with the reason when network namespaces are unusable. */
export async function assertNetnsUsable(): Promise<void> {
  const support = await netnsSupport();
  if (!support.ok) throw new Error(`CI=true but network namespaces are unusable: ${support.reason}`);
}
