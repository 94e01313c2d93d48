/**
 * Memory of the node informer (R58) against a real kube-apiserver.
 *
 * The parent starts a control plane and creates N realistic nodes (as a
 * kubelet writes them: ~50 images, 5 conditions, labels, annotations,
 * managedFields of a create and a /status heartbeat). Each measurement then
 * runs in a fresh child process, so its RSS is that of a controller process
 * and nothing else:
 *   - informer:   client + NodeInformer, synced;
 *   - controller: the same plus RouteController (watch mode), metrics and an
 *                 in-memory cloud, after its first reconcile created N routes;
 *   - raw:        the nodes held as parsed, untransformed JSON (what an
 *                 informer without the transform would keep), for comparison.
 *
 * With --compiled, the informer is measured once more from the compiled
 * JavaScript (tsc output, as an installed package runs it), without the
 * TypeScript loader that `node file.ts` adds (~30 MB).
 *
 * Every child runs with the V8 flags the daemon's executable starts with
 * (bin/node-flags.js), so that the numbers are those of the shipped program;
 * --v8-defaults measures without them, --semi N additionally with
 * --max-semi-space-size=N.
 *
 *   npx node scripts/informer-memory.ts [--nodes 5000] [--compiled] [--semi 2] [--v8-defaults] [--json]
 *
 * Needs the test binaries (npm run testenv:build).
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { missingNodeFlags } from '../bin/node-flags.js';
import { parseCommandLine, usageError } from '../src/cli/script-args.ts';

const USAGE = `Usage: npx node scripts/informer-memory.ts [flags]

Resident memory of the node informer and of the controller against a real
kube-apiserver with N realistic nodes, each measured in a fresh process
(docs/informer-memory.md). Needs npm run testenv:build.

Flags:
  --nodes N        nodes to create (default 5000)
  --compiled       also measure the compiled JavaScript (as an installed package runs)
  --semi MB        also measure with V8's --max-semi-space-size=MB
  --v8-defaults    run the measurements with V8's defaults, not the daemon's flags
  --json           one line of JSON instead of indented
  --hold           keep the control plane and its nodes until SIGINT
  -h, --help       this help
`;

const { values } = parseCommandLine(USAGE, {
  options: {
    nodes: { type: 'string', default: '5000' },
    json: { type: 'boolean', default: false },
    // Internal: run one measurement (informer | controller | raw) against this kubeconfig.
    child: { type: 'string' },
    kubeconfig: { type: 'string' },
    // Keep the control plane with its nodes until SIGINT, for running --child by hand.
    hold: { type: 'boolean', default: false },
    compiled: { type: 'boolean', default: false },
    // Also measure with V8's young generation capped at <MB> (--max-semi-space-size).
    semi: { type: 'string' },
    // Run the children with V8's defaults instead of the daemon's flags.
    'v8-defaults': { type: 'boolean', default: false },
  },
});

if (!(Number.isInteger(Number(values.nodes)) && Number(values.nodes) >= 1))
  usageError(`--nodes ${values.nodes}: not a positive integer`);
if (values.semi !== undefined && !(Number(values.semi) > 0))
  usageError(`--semi ${values.semi}: not a positive number`);

interface Sample {
  rssMiB: number;
  heapUsedMiB: number;
  heapTotalMiB: number;
  externalMiB: number;
}

function mib(bytes: number): number {
  return Math.round((bytes / 1048576) * 10) / 10;
}

/**
 * Peak resident bytes of this process. VmHWM, not resourceUsage().maxRSS:
 * Linux carries ru_maxrss over exec, so a child would report its parent's.
 */
function peakRssBytes(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) * 1024 : process.resourceUsage().maxRSS * 1024;
}

function sample(): Sample {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  return {
    rssMiB: mib(m.rss),
    heapUsedMiB: mib(m.heapUsed),
    heapTotalMiB: mib(m.heapTotal),
    externalMiB: mib(m.external),
  };
}

// ------------------------------------------------------------------------------------------------
// child: one measurement

async function child(mode: string, kubeconfig: string): Promise<void> {
  const started = sample();
  const { createKubeClient } = await import('../src/kube/kubeconfig.ts');
  const { NodeInformer } = await import('../src/kube/node-informer.ts');
  const client = createKubeClient({ kubeconfig, env: {} });
  const out: Record<string, unknown> = {
    mode,
    flags: process.execArgv.filter((a) => a.startsWith('--max')),
    started,
  };
  if (mode === 'raw') {
    out['imported'] = sample();
    const raw: unknown[] = [];
    let cont: string | undefined;
    do {
      const q = `limit=500${cont === undefined ? '' : `&continue=${encodeURIComponent(cont)}`}`;
      const page = (await client.requestJson(`/api/v1/nodes?${q}`)) as {
        items: unknown[];
        metadata: { continue?: string };
      };
      raw.push(...page.items);
      cont = page.metadata.continue || undefined;
    } while (cont !== undefined);
    out['held'] = sample();
    out['nodes'] = raw.length;
  } else {
    const { Registry } = await import('prom-client');
    const { RouteControllerMetrics } = await import('../src/controller/metrics.ts');
    const { RouteController } = await import('../src/controller/route-controller.ts');
    const { MemoryRoutes } = await import('../src/cloud/memory/memory-routes.ts');
    const { KubeNodeStatusWriter } = await import('../src/kube/node-status-writer.ts');
    const { KubeEventRecorder } = await import('../src/kube/event-recorder.ts');
    const metrics = new RouteControllerMetrics(new Registry());
    out['imported'] = sample();
    const informer = new NodeInformer({ client, metrics, pageSize: Number(process.env['PAGE'] ?? 500) });
    const t0 = Date.now();
    informer.start();
    await informer.waitForSync(AbortSignal.timeout(600_000));
    out['syncSeconds'] = Math.round((Date.now() - t0) / 100) / 10;
    out['nodes'] = informer.list().length;
    out['synced'] = sample();
    if (mode === 'controller') {
      const cloud = new MemoryRoutes();
      const stop = new AbortController();
      let done!: () => void;
      const first = new Promise<void>((r) => (done = r));
      const rc = new RouteController({
        routes: cloud,
        nodes: informer,
        statusWriter: new KubeNodeStatusWriter(client),
        recorder: new KubeEventRecorder({ client }),
        metrics,
        clusterCIDRs: ['10.0.0.0/8'],
        watchBasedReconciliation: true,
        onReconcile: () => done(),
      });
      const running = rc.run(stop.signal);
      await first;
      out['routes'] = cloud.snapshot().length;
      out['reconciled'] = sample();
      stop.abort();
      await running;
    }
    await informer.stop();
  }
  out['peakRssMiB'] = mib(peakRssBytes());
  client.close();
  process.stdout.write(JSON.stringify(out) + '\n');
}

// ------------------------------------------------------------------------------------------------
// parent: control plane, nodes, children

const hex = (i: number, len: number): string => (i.toString(16) + 'f00dfeedbeef'.repeat(8)).slice(0, len);
const ts = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
const zone = (i: number): string => `us-east-1${'abc'[i % 3]}`;

function node(i: number): object {
  const ip = `10.${(i >> 8) & 255}.${i & 255}.7`;
  const name = `ip-${ip.replaceAll('.', '-')}.ec2.internal`;
  const now = ts(Date.now());
  const cidr = `10.${64 + (i >> 8)}.${i & 255}.0/24`;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: {
        'beta.kubernetes.io/arch': 'amd64',
        'beta.kubernetes.io/instance-type': 'm5.xlarge',
        'beta.kubernetes.io/os': 'linux',
        'failure-domain.beta.kubernetes.io/region': 'us-east-1',
        'failure-domain.beta.kubernetes.io/zone': zone(i),
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/hostname': name,
        'kubernetes.io/os': 'linux',
        'node.kubernetes.io/instance-type': 'm5.xlarge',
        'topology.kubernetes.io/region': 'us-east-1',
        'topology.kubernetes.io/zone': zone(i),
        'example.com/node-pool': `pool-${i % 4}`,
      },
      annotations: {
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
        'csi.volume.kubernetes.io/nodeid': JSON.stringify({ 'ebs.csi.aws.com': `i-${hex(i, 17)}` }),
        'kubeadm.alpha.kubernetes.io/cri-socket': 'unix:///run/containerd/containerd.sock',
        'alpha.kubernetes.io/provided-node-ip': ip,
      },
    },
    spec: { podCIDR: cidr, podCIDRs: [cidr], providerID: `aws:///${zone(i)}/i-${hex(i, 17)}` },
    status: {
      capacity: { cpu: '4', 'ephemeral-storage': '104845292Ki', memory: '16069688Ki', pods: '58' },
      allocatable: { cpu: '3920m', 'ephemeral-storage': '95551679124', memory: '15052856Ki', pods: '58' },
      conditions: [
        ['MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'],
        ['DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'],
        ['PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'],
        ['Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'],
        ['NetworkUnavailable', 'False', 'RouteCreated', 'RouteController created a route'],
      ].map(([type, status, reason, message]) => ({
        type,
        status,
        reason,
        message,
        lastHeartbeatTime: now,
        lastTransitionTime: now,
      })),
      addresses: [
        { type: 'InternalIP', address: ip },
        { type: 'InternalDNS', address: name },
        { type: 'Hostname', address: name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: hex(i, 32),
        systemUUID: `ec2${hex(i, 5)}-0000-0000-0000-${hex(i, 12)}`,
        bootID: `${hex(i + 1, 8)}-0000-0000-0000-${hex(i + 2, 12)}`,
        kernelVersion: '6.1.112-122.189.amzn2023.x86_64',
        osImage: 'Amazon Linux 2023.6.20241121',
        containerRuntimeVersion: 'containerd://1.7.23',
        kubeletVersion: 'v1.36.3',
        kubeProxyVersion: 'v1.36.3',
        operatingSystem: 'linux',
        architecture: 'amd64',
      },
      images: Array.from({ length: 50 }, (_, k) => {
        const repo = `registry.example.com/team-${k % 7}/service-${k}`;
        return {
          names: [`${repo}@sha256:${hex(i * 97 + k, 64)}`, `${repo}:v1.${k}.${i % 10}`],
          sizeBytes: 10_000_000 + k * 1_234_567,
        };
      }),
    },
  };
}

/** The informer measurement as plain JavaScript on the compiled modules in `dist`. */
const COMPILED_CHILD = `
const [dist, kubeconfig] = process.argv.slice(1);
const mib = (b) => Math.round((b / 1048576) * 10) / 10;
const { readFileSync } = await import('node:fs');
// VmHWM: Linux carries ru_maxrss over exec, so maxRSS would be the parent's.
const peakRss = () => Number(/VmHWM:\\s+(\\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
const sample = () => {
  globalThis.gc(); globalThis.gc();
  const m = process.memoryUsage();
  return { rssMiB: mib(m.rss), heapUsedMiB: mib(m.heapUsed), heapTotalMiB: mib(m.heapTotal), externalMiB: mib(m.external) };
};
const started = sample();
const { createKubeClient } = await import(dist + '/kube/kubeconfig.js');
const { NodeInformer } = await import(dist + '/kube/node-informer.js');
const { RouteControllerMetrics } = await import(dist + '/controller/metrics.js');
const { Registry } = await import('prom-client');
const client = createKubeClient({ kubeconfig, env: {} });
const metrics = new RouteControllerMetrics(new Registry());
const imported = sample();
const informer = new NodeInformer({ client, metrics });
const t0 = Date.now();
informer.start();
await informer.waitForSync(AbortSignal.timeout(600000));
const syncSeconds = Math.round((Date.now() - t0) / 100) / 10;
const synced = sample();
const nodes = informer.list().length;
await informer.stop();
client.close();
console.log(JSON.stringify({ mode: 'informer (compiled JS)', flags: process.execArgv.filter((a) => a.startsWith('--max')), started, imported, syncSeconds, nodes, synced,
  peakRssMiB: mib(peakRss()) }));
`;

function runCompiledChild(kubeconfig: string, semi?: string): Promise<Record<string, unknown>> {
  const root = path.resolve(import.meta.dirname, '..');
  // Inside node_modules so that the compiled modules resolve the repository's dependencies.
  const dist = path.join(root, 'node_modules', '.cache', 'cloud-route-controller-memory-dist');
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const build = ['-p', path.join(root, 'tsconfig.build.json'), '--outDir', dist, '--declaration', 'false'];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [tsc, ...build, '--sourceMap', 'false'], { timeout: 300_000 }, (err, out) => {
      if (err) return reject(new Error(`tsc failed: ${err.message}\n${out}`));
      const args = [
        '--expose-gc',
        ...v8Flags(semi),
        '--input-type=module',
        '-e',
        COMPILED_CHILD,
        pathToFileURL(dist).href,
        kubeconfig,
      ];
      execFile(process.execPath, args, { maxBuffer: 1 << 20, timeout: 900_000 }, (e2, stdout, stderr) => {
        if (e2) reject(new Error(`compiled child failed: ${e2.message}\n${stderr}`));
        else resolve(JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>);
      });
    });
  });
}

async function pool(count: number, width: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await fn(next++);
    }),
  );
}

function v8Flags(semi: string | undefined): string[] {
  if (semi !== undefined) return [`--max-semi-space-size=${semi}`];
  return values['v8-defaults'] ? [] : [...missingNodeFlags([], process.env['NODE_OPTIONS'])];
}

function runChild(mode: string, kubeconfig: string, semi?: string): Promise<Record<string, unknown>> {
  const args = [
    '--expose-gc',
    ...v8Flags(semi),
    import.meta.filename,
    '--child',
    mode,
    '--kubeconfig',
    kubeconfig,
  ];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { maxBuffer: 1 << 20, timeout: 900_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${mode} child failed: ${err.message}\n${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>);
    });
  });
}

async function parent(n: number): Promise<void> {
  const { startControlPlane, testenvBinaries } = await import('../test/support/controlplane.ts');
  const { createKubeClient } = await import('../src/kube/kubeconfig.ts');
  if (testenvBinaries() === undefined) {
    console.error('kube-apiserver/etcd binaries missing: run `npm run testenv:build`');
    process.exit(2);
  }
  const cp = await startControlPlane();
  try {
    const admin = createKubeClient({ kubeconfig: cp.adminKubeconfig, env: {}, qps: 1e6, burst: 1e6 });
    const t0 = Date.now();
    let bytes = 0;
    await pool(n, 16, async (i) => {
      // As a kubelet: register, then a heartbeat through /status (a second managedFields entry).
      const created = (await admin.requestJson('/api/v1/nodes?fieldManager=kubelet', {
        method: 'POST',
        body: node(i),
      })) as { metadata: { name: string } };
      const res = await admin.request(`/api/v1/nodes/${created.metadata.name}/status?fieldManager=kubelet`, {
        method: 'PATCH',
        body: { status: { conditions: [{ type: 'Ready', lastHeartbeatTime: ts(Date.now() + 1000) }] } },
        contentType: 'application/strategic-merge-patch+json',
      });
      bytes += res.body.length;
    });
    admin.close();
    const createSeconds = Math.round((Date.now() - t0) / 100) / 10;
    if (values.hold) {
      console.log(`${n} nodes in ${createSeconds} s; admin kubeconfig: ${cp.adminKubeconfig}`);
      await new Promise<void>((resolve) => process.once('SIGINT', resolve));
      return;
    }
    const measurements: Record<string, unknown> = {};
    for (const mode of ['informer', 'controller', 'raw']) {
      measurements[mode] = await runChild(mode, cp.adminKubeconfig);
    }
    if (values.compiled) measurements['compiled'] = await runCompiledChild(cp.adminKubeconfig);
    if (values.semi !== undefined) {
      measurements[`informer, --max-semi-space-size=${values.semi}`] = await runChild(
        'informer',
        cp.adminKubeconfig,
        values.semi,
      );
      if (values.compiled) {
        measurements[`compiled, --max-semi-space-size=${values.semi}`] = await runCompiledChild(
          cp.adminKubeconfig,
          values.semi,
        );
      }
    }
    const result = {
      nodes: n,
      avgNodeJsonBytes: Math.round(bytes / n),
      createSeconds,
      ...measurements,
      machine: {
        nproc: os.availableParallelism(),
        memoryGiB: Math.round((os.totalmem() / 1073741824) * 10) / 10,
        cpu: os.cpus()[0]?.model ?? 'unknown',
        node: process.version,
        kubeApiserver: cp.versions.kubeApiserver,
        etcd: cp.versions.etcd,
      },
    };
    console.log(values.json ? JSON.stringify(result) : JSON.stringify(result, null, 2));
  } finally {
    await cp.stop();
  }
}

if (values.child === 'compiled') {
  console.log(JSON.stringify(await runCompiledChild(values.kubeconfig ?? '', values.semi)));
} else if (values.child !== undefined) await child(values.child, values.kubeconfig ?? '');
else await parent(Number(values.nodes));
