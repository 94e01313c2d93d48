// End to end on Linux: real network namespaces (a router and three nodes), the
// real kube-apiserver, and the RouteController with the `linux` provider
// programming the router's routing table. Reachability of pod addresses,
// measured with ping, proves the routes work; deleting a Node object takes its
// pods off the network; a route added by hand with another protocol survives.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { linuxProviderFactory } from '../../src/cloud/linux/index.ts';
import { MemoryLogger } from '../../src/core/ports.ts';
import { RouteController } from '../../src/controller/route-controller.ts';
import type { ReconcileReport } from '../../src/controller/reconcile.ts';
import { KubeEventRecorder } from '../../src/kube/event-recorder.ts';
import { createKubeClient } from '../../src/kube/kubeconfig.ts';
import { NodeInformer } from '../../src/kube/node-informer.ts';
import { KubeNodeStatusWriter } from '../../src/kube/node-status-writer.ts';
import { startControlPlane, type ControlPlane } from '../support/controlplane.ts';
import {
  assertNetnsUsable,
  createTopology,
  netnsClusterSkip,
  type NodeHost,
  type Topology,
} from '../support/netns.ts';
import { Admin, setupControllerUser, waitFor } from './kube-helpers.ts';

const skip = await netnsClusterSkip('linux end-to-end');

describe(
  'linux provider end to end: apiserver → controller → router → ping',
  { skip, timeout: 180_000 },
  () => {
    let cp: ControlPlane | undefined;
    let topo: Topology;
    let admin: Admin;
    let stop: () => Promise<void> = async () => {};
    let logger: MemoryLogger;
    const reports: ReconcileReport[] = [];
    let n1: NodeHost;
    let n2: NodeHost;
    let n3: NodeHost;

    before(async () => {
      await assertNetnsUsable();
      cp = await startControlPlane();
      admin = new Admin(cp.adminKubeconfig);
      const kubeconfig = await setupControllerUser(cp);
      topo = await createTopology({ nodes: 3 });
      [n1, n2, n3] = topo.nodes as [NodeHost, NodeHost, NodeHost];
      // A route someone else added, inside the cluster CIDR, with another protocol number.
      await topo.ip(topo.router, [
        'route',
        'add',
        '10.244.99.0/24',
        'via',
        n1.internalIPv4,
        'proto',
        'static',
      ]);

      const client = createKubeClient({ kubeconfig });
      logger = new MemoryLogger(2);
      const informer = new NodeInformer({ client, logger });
      const provider = await linuxProviderFactory(`netns: ${topo.router}\n`, informer);
      const recorder = new KubeEventRecorder({ client, logger });
      const controller = new RouteController({
        routes: provider.routes()!,
        nodes: informer,
        statusWriter: new KubeNodeStatusWriter(client),
        recorder,
        logger,
        clusterName: 'linux-e2e',
        clusterCIDRs: [topo.clusterCIDRv4, topo.clusterCIDRv6],
        watchBasedReconciliation: true,
        minReconcileIntervalMs: 200,
        onReconcile: (r) => reports.push(r),
      });
      const ac = new AbortController();
      informer.start();
      const running = controller.run(ac.signal);
      stop = async () => {
        ac.abort();
        await running;
        await informer.stop();
        await recorder.close();
        client.close();
      };
    });

    after(async () => {
      await stop();
      await topo?.teardown();
      await cp?.stop();
    });

    it('pods are unreachable before the Node objects exist', async () => {
      assert.equal(await topo.podPing(n1, n2, 4), false);
      assert.equal(await topo.podPing(n1, n2, 6), false);
    });

    it('creating the Node objects programs the router: pods of different nodes reach each other', async () => {
      for (const n of topo.k8sNodes()) {
        await admin.createNode(n.metadata!.name!, n.spec!.podCIDRs!, n.status!.addresses!);
      }
      await waitFor('all pods reachable', 60_000, async () => {
        for (const [a, b] of [
          [n1, n2],
          [n2, n3],
          [n3, n1],
        ] as const) {
          if (!(await topo.podPing(a, b, 4)) || !(await topo.podPing(a, b, 6))) return false;
        }
        return true;
      });
      // The reconcile patches the conditions after its routes work: wait for them, not for the pings.
      for (const n of topo.nodes) {
        await waitFor(`${n.name} NetworkUnavailable=False/RouteCreated`, 20_000, async () => {
          const c = await admin.condition(n.name);
          return c?.status === 'False' && c.reason === 'RouteCreated';
        });
      }
      const routes = await topo.ip(topo.router, ['-4', 'route', 'show', 'proto', '200']);
      for (const n of topo.nodes)
        assert.match(routes, new RegExp(`${n.podCIDRv4.replace(/\./g, '\\.')} via ${n.internalIPv4}`));
    });

    it('deleting a Node object removes its route: its pods become unreachable, the others stay reachable', async () => {
      await admin.deleteNode(n3.name);
      // The reconcile deletes the IPv4 and IPv6 routes concurrently: either may go first.
      await waitFor(
        'node-3 unreachable over IPv4 and IPv6',
        30_000,
        async () => !(await topo.podPing(n1, n3, 4)) && !(await topo.podPing(n1, n3, 6)),
      );
      assert.equal(await topo.podPing(n1, n2, 4), true);
      assert.equal(await topo.podPing(n2, n1, 6), true);
    });

    it('the hand-made route with another protocol survived every reconcile', async () => {
      assert.ok(reports.length >= 2, `${reports.length} reconciles ran`);
      assert.ok(
        reports.every((r) => r.outcome !== 'error'),
        JSON.stringify(reports.map((r) => r.outcome)),
      );
      const manual = await topo.ip(topo.router, ['-4', 'route', 'show', '10.244.99.0/24']);
      assert.match(
        manual,
        new RegExp(`10\\.244\\.99\\.0/24 via ${n1.internalIPv4.replace(/\./g, '\\.')} .*proto static`),
      );
    });
  },
);
