// Handover of a Linux router's pod routes from their previous writer, and rollback to it: a router
// and its nodes in real network namespaces (test/support/netns.ts), the real kube-apiserver, and
// the real executable started with a cloud-controller-manager's command line. The linux plug-in
// has no CCM; its previous writer is whatever wrote `<pod CIDR> via <node InternalIP>` before:
//   - a script's `ip route add` (protocol boot): docs/migration.md's re-tag block, run as
//     written, gives the routes protocol 200 in place (no ping lost); the daemon then writes no
//     route and patches no condition; without the re-tag, `plan` lists the creates and `run`
//     fails them naming the foreign route, writing nothing. Rollback: after the daemon routed an
//     IPv4, an IPv6 and a dual-stack node, the doc's reverse re-tag hands every route back, and
//     the writer's own listing (protocol boot) shows each with the node's InternalIP as next hop.
//   - BIRD (protocol 12, metric 32): `protocol: 12` in the cloud config, no re-tag, no write; its
//     listing by protocol 12 shows the routes written for new nodes.
// Writes are counted by the cloud config's ipCommand, a wrapper that logs every `ip` run.
// Needs root, network namespaces and the testenv binaries; skips visibly without them, except
// under CI=true. Run: node --test test/integration/linux-handover.test.ts
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startControlPlane, type ControlPlane } from '../support/controlplane.ts';
import {
  assertNetnsUsable,
  createTopology,
  netnsClusterSkip,
  type NodeHost,
  type Topology,
} from '../support/netns.ts';
import { Daemon, runToExit, type LogRecord } from '../e2e/support.ts';
import { ccmArgs, docBlock, expected, forTopology, Router } from '../support/linux-handover.ts';
import { Admin, setupControllerUser, waitFor } from './kube-helpers.ts';

const skip = await netnsClusterSkip('linux handover');

// The condition a route controller leaves on a routed node.
const ROUTED = {
  type: 'NetworkUnavailable',
  status: 'False',
  reason: 'RouteCreated',
  message: 'RouteController created a route',
};

describe(
  'handover from and rollback to the previous writer of a Linux router',
  { skip, timeout: 300_000 },
  () => {
    let cp: ControlPlane | undefined;
    let admin: Admin;
    let kubeconfig = '';
    let dir = '';
    let daemon: Daemon | undefined;

    before(async () => {
      await assertNetnsUsable();
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'routectl-linux-handover-'));
      cp = await startControlPlane();
      admin = new Admin(cp.adminKubeconfig);
      kubeconfig = await setupControllerUser(cp);
    });
    after(async () => {
      await daemon?.kill();
      await cp?.stop();
      if (dir !== '') fs.rmSync(dir, { recursive: true, force: true });
    });

    /** A node as its previous writer left it: pod CIDRs, InternalIPs, condition (when routed). */
    async function addNode(n: NodeHost, families: (4 | 6)[], routed: boolean): Promise<void> {
      const cidrs = families.map((f) => (f === 4 ? n.podCIDRv4 : n.podCIDRv6));
      const ips = families.map((f) => ({
        type: 'InternalIP',
        address: f === 4 ? n.internalIPv4 : n.internalIPv6,
      }));
      await admin.createNode(n.name, cidrs, ips);
      if (routed) await markRouted(n);
    }

    async function markRouted(n: NodeHost): Promise<void> {
      const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      await admin.patchStatus(n.name, {
        conditions: [{ ...ROUTED, lastTransitionTime: now, lastHeartbeatTime: now }],
      });
    }

    async function versions(nodes: readonly NodeHost[]): Promise<string[]> {
      return Promise.all(nodes.map(async (n) => (await admin.getNode(n.name))!.metadata.resourceVersion));
    }

    function start(router: Router, name: string): Daemon {
      daemon = Daemon.start(
        [
          'run',
          `--kubeconfig=${kubeconfig}`,
          ...ccmArgs(router.config, router.topo),
          '--leader-elect=false',
          '--route-reconciliation-period=2s',
          '--metrics-bind-address=127.0.0.1:0',
          '--health-probe-bind-address=127.0.0.1:0',
          '--log-format=json',
        ],
        path.join(dir, `${name}.log`),
      );
      return daemon;
    }

    async function stop(d: Daemon): Promise<void> {
      d.signal('SIGTERM');
      assert.equal((await d.waitExit(30_000)).code, 0, d.tail());
    }

    /** The first `count` finished reconciles. */
    async function reconciles(d: Daemon, count: number): Promise<LogRecord[]> {
      const done = (): LogRecord[] => d.logs().filter((r) => r.msg === 'Route reconcile finished');
      await waitFor(`${count} reconciles`, 60_000, () => {
        if (d.exitInfo) throw new Error(`daemon exited:\n${d.tail()}`);
        return done().length >= count;
      });
      return done().slice(0, count);
    }

    async function plan(router: Router): Promise<string> {
      const argv = forTopology(docBlock('linux-plan'), router.topo).replace(/\\\n/g, ' ').trim().split(/\s+/);
      assert.deepEqual(argv.slice(0, 3), ['npx', 'cloud-route-controller', 'plan']);
      const args = argv
        .slice(2)
        .map((a) => (a === '~/.kube/config' ? kubeconfig : a))
        .map((a) => a.replace('/etc/cloud-route-controller/linux.yaml', router.config));
      const r = await runToExit(args);
      assert.equal(r.code, 0, r.stderr);
      return r.stdout;
    }

    async function reachable(topo: Topology, pairs: [NodeHost, NodeHost, 4 | 6][]): Promise<void> {
      for (const [a, b, f] of pairs) {
        assert.equal(await topo.podPing(a, b, f), true, `IPv${f} ${a.name} → ${b.name}`);
        assert.equal(await topo.podPing(b, a, f), true, `IPv${f} ${b.name} → ${a.name}`);
      }
    }

    describe("a script's routes (protocol boot): re-tagged as the doc says", () => {
      let router: Router;
      let n: NodeHost[];
      const retag = (): string => forTopology(docBlock('linux-retag'), router.topo);

      before(async () => {
        const topo = await createTopology({ nodes: 5 });
        router = new Router(topo, dir, 'boot');
        n = [...topo.nodes];
        for (const node of n.slice(0, 2)) {
          // As a script adds them: `ip route add`, whose default protocol is boot; one with a
          // metric, which the re-tag must keep (the kernel matches the route to replace by it).
          const metric = node.index === 2 ? ['metric', '100'] : [];
          await topo.ip(topo.router, [
            '-4',
            'route',
            'add',
            node.podCIDRv4,
            'via',
            node.internalIPv4,
            ...metric,
          ]);
          await topo.ip(topo.router, ['-6', 'route', 'add', node.podCIDRv6, 'via', node.internalIPv6]);
          await addNode(node, [4, 6], true);
        }
      });
      after(async () => {
        for (const node of n ?? []) await admin.deleteNode(node.name).catch(() => {});
        await router?.topo.teardown();
      });

      test('without the re-tag: plan lists the creates; run fails them naming the route, writes nothing', async () => {
        const [n1, n2] = n as [NodeHost, NodeHost];
        const table = await router.table();
        const out = await plan(router);
        assert.match(out, /Routes to create \(4\):/);
        for (const cidr of [n1.podCIDRv4, n1.podCIDRv6, n2.podCIDRv4, n2.podCIDRv6])
          assert.ok(out.includes(`+ ${cidr} -> node-`), out);
        assert.match(out, /Routes to delete \(0\):\n {2}none/);

        const d = start(router, 'boot-unretagged');
        const [first] = await reconciles(d, 1);
        assert.deepEqual([first!['outcome'], first!['created'], first!['deleted']], ['error', 0, 0]);
        // The message docs/migration.md quotes.
        assert.ok(
          d
            .output()
            .includes(
              `table main already has a route for ${n1.podCIDRv4} that this controller does not own ` +
                `(protocol other than 200: ${n1.podCIDRv4} via ${n1.internalIPv4} proto boot)`,
            ),
          d.tail(),
        );
        await stop(d);
        assert.deepEqual(router.writes(), []);
        assert.equal(await router.table(), table);
        await reachable(router.topo, [
          [n1, n2, 4],
          [n1, n2, 6],
        ]);
        // The hazard the doc names: the failed create marks the node NetworkUnavailable.
        const c = await admin.condition(n1.name);
        assert.deepEqual([c?.status, c?.reason], ['True', 'NoRouteCreated']);
        for (const node of [n1, n2]) await markRouted(node);
      });

      test('handover: the re-tag loses no ping; the CCM command line writes no route, patches no condition', async () => {
        const [n1, n2] = n as [NodeHost, NodeHost];
        const topo = router.topo;
        const flood = (f: 4 | 6): Promise<{ stdout: string }> =>
          topo.exec(
            n1.ns,
            [
              'ping',
              '-n',
              '-q',
              '-c',
              '200',
              '-i',
              '0.01',
              '-W',
              '1',
              '-I',
              f === 4 ? n1.podIPv4 : n1.podIPv6,
              f === 4 ? n2.podIPv4 : n2.podIPv6,
            ],
            { check: false, timeoutMs: 20_000 },
          );
        const floods = [flood(4), flood(6)];
        await new Promise((r) => setTimeout(r, 300));
        await router.sh(retag());
        for (const { stdout } of await Promise.all(floods)) {
          const m = /(\d+) packets transmitted, (\d+) received/.exec(stdout);
          assert.ok(m && m[1] === '200' && m[2] === '200', stdout);
        }
        const pods: [NodeHost, 4 | 6][] = [
          [n1, 4],
          [n1, 6],
          [n2, 4],
          [n2, 6],
        ];
        assert.deepEqual(await router.listing('200'), expected(pods));
        assert.deepEqual(await router.listing('boot'), []);

        const out = await plan(router);
        for (const s of ['Routes to create', 'Routes to delete', 'Node conditions to patch'])
          assert.match(out, new RegExp(`${s} \\(0\\):\\n {2}none`));

        const before = await versions([n1, n2]);
        const d = start(router, 'boot-handover');
        for (const r of await reconciles(d, 2))
          assert.deepEqual(
            [r['outcome'], r['created'], r['deleted'], r['conditions']],
            ['noop', 0, 0, 0],
            d.tail(),
          );
        const ignored = d.logs().find((r) => r.msg.startsWith('Ignoring cloud-controller-manager flags'));
        assert.ok(
          (ignored?.['flags'] as string[] | undefined)?.includes('--use-service-account-credentials'),
          d.tail(),
        );
        assert.deepEqual(router.writes(), []);
        assert.deepEqual(await versions([n1, n2]), before);
        await reachable(topo, [
          [n1, n2, 4],
          [n1, n2, 6],
        ]);
      });

      test('rollback: the reverse re-tag hands back the routes of IPv4, IPv6 and dual-stack nodes', async () => {
        const [n1, n2, n3, n4, n5] = n as [NodeHost, NodeHost, NodeHost, NodeHost, NodeHost];
        assert.ok(daemon && !daemon.exitInfo, 'the handover daemon runs');
        await addNode(n3, [4], false);
        await addNode(n4, [6], false);
        await addNode(n5, [4, 6], false);
        for (const node of [n3, n4, n5])
          await waitFor(
            `${node.name} RouteCreated`,
            30_000,
            async () => (await admin.condition(node.name))?.reason === 'RouteCreated',
          );
        const added: [NodeHost, 4 | 6][] = [
          [n3, 4],
          [n4, 6],
          [n5, 4],
          [n5, 6],
        ];
        const writes = router.writes();
        assert.equal(writes.length, 4, writes.join('\n'));
        for (const w of expected(added))
          assert.ok(
            writes.some((l) => l.includes(`route replace ${w} table main proto 200`)),
            w,
          );
        await stop(daemon);

        const fn = retag()
          .split('\n')
          .filter((l) => !l.startsWith('retag '));
        await router.sh([...fn, forTopology(docBlock('linux-retag-back'), router.topo)].join('\n'));
        const all: [NodeHost, 4 | 6][] = [[n1, 4], [n1, 6], [n2, 4], [n2, 6], ...added];
        assert.deepEqual(await router.listing('boot'), expected(all));
        assert.deepEqual(await router.listing('200'), []);
        await reachable(router.topo, [
          [n1, n3, 4],
          [n2, n4, 6],
          [n1, n5, 4],
          [n2, n5, 6],
        ]);
      });
    });

    describe("BIRD's routes (protocol 12, metric 32): taken over with protocol: 12", () => {
      let router: Router;
      let n: NodeHost[];

      before(async () => {
        const topo = await createTopology({ nodes: 3 });
        router = new Router(topo, dir, 'bird', 12);
        n = [...topo.nodes];
        for (const node of n.slice(0, 2)) {
          // As BIRD's kernel protocol exports them (its default kernel metric is 32).
          for (const [f, dst, via] of [
            [4, node.podCIDRv4, node.internalIPv4],
            [6, node.podCIDRv6, node.internalIPv6],
          ] as const)
            await topo.ip(topo.router, [
              `-${f}`,
              'route',
              'add',
              dst,
              'via',
              via,
              'proto',
              '12',
              'metric',
              '32',
            ]);
          await addNode(node, [4, 6], true);
        }
      });
      after(async () => {
        for (const node of n ?? []) await admin.deleteNode(node.name).catch(() => {});
        await router?.topo.teardown();
      });

      test('handover without a re-tag: no route written, no condition patched; rollback: its listing has the new node', async () => {
        const [n1, n2, n3] = n as [NodeHost, NodeHost, NodeHost];
        const table = await router.table();
        const out = await plan(router);
        for (const s of ['Routes to create', 'Routes to delete', 'Node conditions to patch'])
          assert.match(out, new RegExp(`${s} \\(0\\):\\n {2}none`));
        const before = await versions([n1, n2]);
        const d = start(router, 'bird');
        for (const r of await reconciles(d, 2))
          assert.deepEqual(
            [r['outcome'], r['created'], r['deleted'], r['conditions']],
            ['noop', 0, 0, 0],
            d.tail(),
          );
        assert.deepEqual(router.writes(), []);
        assert.deepEqual(await versions([n1, n2]), before);
        assert.equal(await router.table(), table);

        await addNode(n3, [4, 6], false);
        await waitFor(
          'node-3 RouteCreated',
          30_000,
          async () => (await admin.condition(n3.name))?.reason === 'RouteCreated',
        );
        assert.equal(router.writes().length, 2, router.writes().join('\n'));
        await stop(d);
        const all: [NodeHost, 4 | 6][] = [
          [n1, 4],
          [n1, 6],
          [n2, 4],
          [n2, 6],
          [n3, 4],
          [n3, 6],
        ];
        assert.deepEqual(await router.listing('12'), expected(all));
        await reachable(router.topo, [
          [n1, n3, 4],
          [n2, n3, 6],
        ]);
      });
    });
  },
);
