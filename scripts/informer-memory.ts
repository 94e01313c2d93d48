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
 * Needs the test binaries (npm run testenv:build). The nodes are made in
 * informer-memory-nodes.ts, the measurements in informer-memory-measure.ts.
 */
import * as os from 'node:os';
import { parseCommandLine, usageError } from '../src/cli/script-args.ts';
import type { KubeClient } from '../src/kube/kube-client.ts';
import { measure, runChild, runCompiledChild, type ChildOptions } from './informer-memory-measure.ts';
import { kubeletNode, ts } from './informer-memory-nodes.ts';

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

const childOptions: ChildOptions = { v8Defaults: values['v8-defaults'] };

async function pool(count: number, width: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) await fn(next++);
    }),
  );
}

/** N nodes as kubelets write them; the average size of one in bytes of JSON. */
async function createNodes(admin: KubeClient, n: number): Promise<number> {
  let bytes = 0;
  await pool(n, 16, async (i) => {
    // As a kubelet: register, then a heartbeat through /status (a second managedFields entry).
    const created = (await admin.requestJson('/api/v1/nodes?fieldManager=kubelet', {
      method: 'POST',
      body: kubeletNode(i),
    })) as { metadata: { name: string } };
    const res = await admin.request(`/api/v1/nodes/${created.metadata.name}/status?fieldManager=kubelet`, {
      method: 'PATCH',
      body: { status: { conditions: [{ type: 'Ready', lastHeartbeatTime: ts(Date.now() + 1000) }] } },
      contentType: 'application/strategic-merge-patch+json',
    });
    bytes += res.body.length;
  });
  return Math.round(bytes / n);
}

/** Every measurement the flags ask for, by name, one child after the other. */
async function measureAll(kubeconfig: string): Promise<Record<string, unknown>> {
  const script = import.meta.filename;
  const measurements: Record<string, unknown> = {};
  for (const mode of ['informer', 'controller', 'raw']) {
    measurements[mode] = await runChild(script, mode, kubeconfig, childOptions);
  }
  if (values.compiled) measurements['compiled'] = await runCompiledChild(kubeconfig, childOptions);
  if (values.semi !== undefined) {
    const semi = { ...childOptions, semi: values.semi };
    measurements[`informer, --max-semi-space-size=${values.semi}`] = await runChild(
      script,
      'informer',
      kubeconfig,
      semi,
    );
    if (values.compiled) {
      measurements[`compiled, --max-semi-space-size=${values.semi}`] = await runCompiledChild(
        kubeconfig,
        semi,
      );
    }
  }
  return measurements;
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
    const avgNodeJsonBytes = await createNodes(admin, n);
    admin.close();
    const createSeconds = Math.round((Date.now() - t0) / 100) / 10;
    if (values.hold) {
      console.log(`${n} nodes in ${createSeconds} s; admin kubeconfig: ${cp.adminKubeconfig}`);
      await new Promise<void>((resolve) => process.once('SIGINT', resolve));
      return;
    }
    const measurements = await measureAll(cp.adminKubeconfig);
    const result = {
      nodes: n,
      avgNodeJsonBytes,
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
  console.log(
    JSON.stringify(await runCompiledChild(values.kubeconfig ?? '', { ...childOptions, semi: values.semi })),
  );
} else if (values.child !== undefined) await measure(values.child, values.kubeconfig ?? '');
else await parent(Number(values.nodes));
