/**
 * The product as an operator runs it, on AWS (moto): the image built by scripts/image.sh from the
 * project's Dockerfile, `helm install` of the chart, its Deployment's pods run by podman with the
 * chart's args, ServiceAccount token and securityContext, in a control plane with real node IPAM
 * (kube-controller-manager) and real node agents (kwok). Both modes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { EC2Client } from '@aws-sdk/client-ec2';
import { byDestination, createFixture, tableRoutes, ZONE, type Ec2Fixture } from '../support/ec2-fixture.ts';
import { startMoto, type Moto } from '../support/moto.ts';
import { startCluster, type Cluster } from '../support/kwok-cluster.ts';
import { accesses, allows, grantedPermissions, grants, used } from './audit.ts';
import { serviceAccountToken } from './pod.ts';
import { helmPath, NAMESPACE, podGet, RELEASE, Release } from './release.ts';
import {
  createObject,
  deleteNode,
  getNode,
  leader,
  lease,
  metricSum,
  networkUnavailable,
  registerNode,
  scrape,
  waitNodesRouted,
  waitUntil,
} from './scenario.ts';
import { deploySkip } from './skip.ts';
import { apiRequest } from '../support/controlplane.ts';

const SA_USER = `system:serviceaccount:${NAMESPACE}:${RELEASE}`;
const CLUSTER = 'kubernetes';
/** How long kwok's heartbeats and Lease renewals must leave the controller idle. */
const QUIET_MS = Number(process.env.DEPLOY_QUIET_SECONDS ?? '120') * 1000;
const HEARTBEAT_MS = 10_000;

function awsValues(
  moto: Moto,
  fx: Ec2Fixture,
  watch: boolean,
  extraArgs: string[] = [],
): Record<string, unknown> {
  return {
    provider: 'aws',
    clusterName: CLUSTER,
    clusterCIDRs: ['10.244.0.0/16', 'fd00:10:244::/56'],
    watchBasedReconciliation: watch,
    cloudConfig: { content: `region: us-east-1\nrouteTableId: ${fx.tableId}\nendpoint: ${moto.endpoint}\n` },
    envFrom: [{ secretRef: { name: 'aws-credentials' } }],
    extraEnv: [{ name: 'AWS_EC2_METADATA_DISABLED', value: 'true' }],
    metrics: { readers: [`${NAMESPACE}/prometheus`] },
    extraArgs,
  };
}

/** The route table as `destination>instance`, sorted, without the VPC's local routes. */
async function table(ec2: EC2Client, fx: Ec2Fixture): Promise<string[]> {
  return Object.entries(byDestination(await tableRoutes(ec2, fx.tableId)))
    .filter(([, target]) => target !== 'local')
    .map(([d, t]) => `${d}>${t}`)
    .sort();
}

function expectedRoutes(
  nodes: Map<string, { spec: { podCIDRs?: string[] } }>,
  instanceOf: (n: string) => string,
): string[] {
  return [...nodes]
    .flatMap(([name, n]) => (n.spec.podCIDRs ?? []).map((cidr) => `${cidr}>${instanceOf(name)}`))
    .sort();
}

async function setup(
  watch: boolean,
): Promise<{ cluster: Cluster; moto: Moto; ec2: EC2Client; fx: Ec2Fixture; release: Release }> {
  const cluster = await startCluster({ auditedUsers: [SA_USER], heartbeatMs: HEARTBEAT_MS });
  const moto = await startMoto();
  const ec2 = new EC2Client({
    endpoint: moto.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    maxAttempts: 1,
  });
  const fx = await createFixture(ec2, CLUSTER, 5);
  await createObject(cluster, `/api/v1/namespaces/${NAMESPACE}/secrets`, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'aws-credentials' },
    stringData: { AWS_ACCESS_KEY_ID: 'testing', AWS_SECRET_ACCESS_KEY: 'testing' },
  });
  const release = new Release(helmPath()!, cluster);
  release.hostPorts = [Number(new URL(moto.endpoint).port)];
  await release.install(awsValues(moto, fx, watch));
  return { cluster, moto, ec2, fx, release };
}

for (const watch of [true, false]) {
  const mode = watch ? 'watch mode' : 'periodic mode';
  describe(
    `aws, ${mode}: the chart's pods from the project's image`,
    { skip: deploySkip(helmPath()) },
    () => {
      let env: Awaited<ReturnType<typeof setup>>;
      const instanceOf = (name: string): string => env.fx.instances[Number(name.split('-')[1])]!.id;
      const names = ['node-0', 'node-1', 'node-2', 'node-3'];

      before(async () => {
        env = await setup(watch);
      });
      after(async () => {
        await env?.release.stopPods();
        await env?.moto.stop();
        await env?.cluster.stop();
      });

      test('nodes register without pod CIDRs; IPAM assigns both families; every node gets its routes and NetworkUnavailable False', async () => {
        for (const name of names) {
          const n = await registerNode(
            env.cluster,
            name,
            `aws:///${ZONE}/${instanceOf(name)}`,
            env.fx.instances[Number(name.split('-')[1])]!.privateIp,
          );
          assert.equal(n.spec.podCIDRs, undefined, 'registered without pod CIDRs');
        }
        const routed = await waitNodesRouted(env.cluster, names, 2);
        const want = expectedRoutes(routed, instanceOf);
        assert.equal(want.length, 8);
        await waitUntil('the route table to hold both families of every node', 30_000, async () => {
          const got = await table(env.ec2, env.fx);
          return JSON.stringify(got) === JSON.stringify(want) ? true : got.join(' ');
        });
        for (const n of routed.values()) {
          assert.match(n.spec.podCIDRs![0]!, /^10\.244\.\d+\.0\/24$/);
          assert.match(n.spec.podCIDRs![1]!, /^fd00:10:244:[0-9a-f:]*\/64$/);
        }
      });

      test('metrics over HTTPS: the metrics-reader token 200, anonymous 401, a ServiceAccount without the role 403', async () => {
        for (const sa of ['prometheus', 'nobody']) {
          await createObject(env.cluster, `/api/v1/namespaces/${NAMESPACE}/serviceaccounts`, {
            apiVersion: 'v1',
            kind: 'ServiceAccount',
            metadata: { name: sa },
          });
        }
        const pod = (await leader(env.cluster, env.release.current(), NAMESPACE, RELEASE))!;
        assert.ok(pod !== undefined, 'a pod holds the Lease');
        const reader = await serviceAccountToken(env.cluster.cp.adminKubeconfig, NAMESPACE, 'prometheus');
        const nobody = await serviceAccountToken(env.cluster.cp.adminKubeconfig, NAMESPACE, 'nobody');
        const ok = await podGet(pod, '/metrics', reader);
        assert.equal(ok.status, 200, ok.body);
        assert.match(ok.body, /^route_controller_route_sync_total\{/m);
        assert.equal((await podGet(pod, '/metrics')).status, 401);
        assert.equal((await podGet(pod, '/metrics', nobody)).status, 403);
      });

      if (watch) {
        test(`kwok's heartbeats and Lease renewals for ${QUIET_MS / 1000} s cause no reconcile and no cloud call`, async () => {
          const pod = (await leader(env.cluster, env.release.current(), NAMESPACE, RELEASE))!;
          const token = await serviceAccountToken(env.cluster.cp.adminKubeconfig, NAMESPACE, 'prometheus');
          // Let the convergence settle: the last condition patch and its report are in.
          let before = '';
          await waitUntil('two equal scrapes 3 s apart', 30_000, async () => {
            const a = await scrape(pod, token);
            await new Promise((r) => setTimeout(r, 3000));
            const b = await scrape(pod, token);
            before = b;
            const same = (n: string): boolean => metricSum(a, n) === metricSum(b, n);
            return same('route_controller_route_sync_total') && same('route_controller_cloud_api_calls_total')
              ? true
              : 'still moving';
          });
          const heartbeats = new Map<string, string>();
          const renewals = new Map<string, string>();
          for (const name of names) {
            heartbeats.set(name, (await getNode(env.cluster, name))!.metadata.resourceVersion);
            renewals.set(name, (await lease(env.cluster, 'kube-node-lease', name))?.spec.renewTime ?? '');
          }
          await new Promise((r) => setTimeout(r, QUIET_MS));
          const afterText = await scrape(pod, token);
          // The node agents did their part: every node's status and Lease moved.
          for (const name of names) {
            assert.notEqual(
              (await getNode(env.cluster, name))!.metadata.resourceVersion,
              heartbeats.get(name),
              `${name}: kwok wrote no heartbeat`,
            );
            assert.notEqual(
              (await lease(env.cluster, 'kube-node-lease', name))?.spec.renewTime,
              renewals.get(name),
              `${name}: Lease not renewed`,
            );
          }
          for (const m of ['route_controller_route_sync_total', 'route_controller_cloud_api_calls_total']) {
            assert.equal(metricSum(afterText, m), metricSum(before, m), `${m} moved during heartbeats`);
          }
          assert.equal(
            metricSum(afterText, 'route_controller_route_sync_total', /trigger="node/),
            metricSum(before, 'route_controller_route_sync_total', /trigger="node/),
          );
        });
      }

      test('a node whose instance does not exist: an Event and NetworkUnavailable stays, no other node loses its route', async () => {
        await registerNode(env.cluster, 'node-bad', `aws:///${ZONE}/i-0000000000deadbee`, '10.0.1.250');
        const failures = async (): Promise<number> => {
          const r = await apiRequest(
            env.cluster.cp.adminKubeconfig,
            'GET',
            `/api/v1/namespaces/default/events?fieldSelector=${encodeURIComponent('involvedObject.name=node-bad')}`,
          );
          const items = (JSON.parse(r.body) as { items: { reason: string; count?: number }[] }).items;
          return items
            .filter((i) => i.reason === 'FailedToCreateRoute')
            .reduce((n, i) => n + (i.count ?? 1), 0);
        };
        await waitUntil('FailedToCreateRoute on node-bad', 60_000, async () =>
          (await failures()) >= 2 ? true : `${await failures()} events`,
        );
        // The kubelet reports a new address: the next attempt fails the same way, and the recorder
        // aggregates the repeat into the existing Event (a patch of its count), as client-go does.
        const seen = await failures();
        await apiRequest(
          env.cluster.cp.adminKubeconfig,
          'PATCH',
          '/api/v1/nodes/node-bad/status',
          JSON.stringify({
            status: {
              addresses: [
                { type: 'InternalIP', address: '10.0.1.251' },
                { type: 'Hostname', address: 'node-bad' },
              ],
            },
          }),
          'application/strategic-merge-patch+json',
        );
        await waitUntil('the repeated failure counted on the Event', 120_000, async () =>
          (await failures()) > seen ? true : `${await failures()} events`,
        );
        assert.notEqual(networkUnavailable(await getNode(env.cluster, 'node-bad')), 'False/RouteCreated');
        const routed = await waitNodesRouted(env.cluster, names, 2);
        assert.deepEqual(await table(env.ec2, env.fx), expectedRoutes(routed, instanceOf));
        await deleteNode(env.cluster, 'node-bad');
      });

      test('deleting a node removes its routes; re-registered under the same name (new UID) it gets fresh ones', async () => {
        const old = (await getNode(env.cluster, 'node-3'))!;
        await deleteNode(env.cluster, 'node-3');
        const rest = names.filter((n) => n !== 'node-3');
        await waitUntil('node-3 routes gone', 60_000, async () => {
          const got = await table(env.ec2, env.fx);
          return got.some((r) => r.endsWith(`>${instanceOf('node-3')}`)) ? got.join(' ') : true;
        });
        const routedRest = await waitNodesRouted(env.cluster, rest, 2);
        assert.deepEqual(await table(env.ec2, env.fx), expectedRoutes(routedRest, instanceOf));
        const again = await registerNode(
          env.cluster,
          'node-3',
          `aws:///${ZONE}/${instanceOf('node-3')}`,
          env.fx.instances[3]!.privateIp,
        );
        assert.notEqual(again.metadata.uid, old.metadata.uid);
        const routed = await waitNodesRouted(env.cluster, names, 2);
        await waitUntil('node-3 routed again', 30_000, async () => {
          const got = await table(env.ec2, env.fx);
          return JSON.stringify(got) === JSON.stringify(expectedRoutes(routed, instanceOf))
            ? true
            : got.join(' ');
        });
      });

      if (watch) {
        test('helm upgrade with a changed arg: new pods start while the old still run, the Lease moves, never two writers, no create, no delete', async () => {
          const before = await table(env.ec2, env.fx);
          const token = await serviceAccountToken(env.cluster.cp.adminKubeconfig, NAMESPACE, 'prometheus');
          const oldPods = [...env.release.current()];
          const oldLeader = (await leader(env.cluster, oldPods, NAMESPACE, RELEASE))!;
          assert.ok(oldLeader !== undefined);
          const writes = (text: string): number =>
            metricSum(text, 'route_controller_cloud_api_calls_total', /operation="(create|delete|apply)"/);
          const oldWrites = new Map<string, number>();
          for (const p of oldPods) oldWrites.set(p.name, writes(await scrape(p, token)));
          const startedAt = Date.now();
          const steps: string[] = [];
          await env.release.upgrade(
            awsValues(env.moto, env.fx, true, ['--route-resync-period=2h']),
            async (step) => {
              const holder = await leader(
                env.cluster,
                [...oldPods, ...env.release.current()],
                NAMESPACE,
                RELEASE,
              );
              steps.push(
                `${step}: running ${env.release
                  .current()
                  .map((p) => p.name)
                  .join(',')}; leader ${holder?.name ?? 'none'}`,
              );
            },
          );
          const newPods = env.release.current();
          assert.equal(newPods.length, 2);
          assert.ok(newPods.every((p) => !oldPods.includes(p)));
          assert.match(
            JSON.stringify(env.release.manifest().deployment.spec.template),
            /--route-resync-period=2h/,
          );
          await waitUntil('a new pod holds the Lease', 60_000, async () =>
            (await leader(env.cluster, newPods, NAMESPACE, RELEASE)) !== undefined
              ? true
              : JSON.stringify(await lease(env.cluster, NAMESPACE, RELEASE)),
          );
          const newLeader = (await leader(env.cluster, newPods, NAMESPACE, RELEASE))!;
          await waitUntil('the new leader reconciled', 60_000, async () =>
            metricSum(await scrape(newLeader, token), 'route_controller_route_sync_total') > 0
              ? true
              : 'no reconcile yet',
          );
          // The first new pod was ready while the old leader still ran and led.
          const both = steps.find(
            (st) => st.startsWith('started') && st.includes(oldLeader.name) && st.includes('-r2-'),
          );
          assert.ok(both !== undefined && both.endsWith(`leader ${oldLeader.name}`), steps.join('\n'));
          for (const p of newPods) {
            const text = await scrape(p, token);
            assert.equal(
              writes(text),
              0,
              `${p.name} created or deleted routes:\n${text
                .split('\n')
                .filter((l) => l.startsWith('route_controller_cloud_api_calls_total'))
                .join('\n')}\n${await p.logs()}`,
            );
          }
          assert.deepEqual(
            await table(env.ec2, env.fx),
            before,
            'the route table changed during the upgrade',
          );
          // Never two writers: the API writes of each pod (its token's ID) fall in disjoint intervals.
          const log = accesses(env.cluster.auditLog, SA_USER).filter(
            (a) =>
              a.time >= startedAt - 60_000 &&
              a.code < 400 &&
              ['create', 'update', 'patch'].includes(a.verb) &&
              a.resource !== 'tokenreviews' &&
              a.resource !== 'subjectaccessreviews',
          );
          const spans = [...oldPods, ...newPods]
            .map((p) => {
              const ts = log
                .filter((a) => a.credentialId === p.credentialId && a.resource !== 'leases')
                .map((a) => a.time);
              return { pod: p.name, from: Math.min(...ts), to: Math.max(...ts), n: ts.length };
            })
            .filter((s) => s.n > 0)
            .sort((a, b) => a.from - b.from);
          for (let i = 1; i < spans.length; i++) {
            assert.ok(spans[i]!.from > spans[i - 1]!.to, `writers overlap: ${JSON.stringify(spans)}`);
          }
          assert.ok(
            spans.every((s) => s.pod === oldLeader.name || newPods.some((p) => p.name === s.pod)),
            JSON.stringify(spans),
          );
          assert.ok(
            [...oldWrites.values()].some((n) => n > 0),
            'the old leader created the routes',
          );
        });

        test('helm uninstall leaves the routes and no chart object; the chart grants exactly what the daemon used', async () => {
          const routesBefore = await table(env.ec2, env.fx);
          const manifest = env.release.manifest();
          const uninstalledAt = Date.now();
          await env.release.uninstall();
          assert.deepEqual(await table(env.ec2, env.fx), routesBefore, 'uninstall changed the route table');
          const left: string[] = [];
          for (const o of manifest.objects) {
            const md = o['metadata'] as { name: string; namespace?: string };
            const kind = String(o['kind']);
            const r = await apiRequest(
              env.cluster.cp.adminKubeconfig,
              'GET',
              objectPath(String(o['apiVersion']), kind, md.name, md.namespace),
            );
            if (r.status !== 404) left.push(`${kind}/${md.name}: ${r.status}`);
          }
          assert.deepEqual(left, [], 'chart objects left behind');
          // Documented (docs/daemon.md, "Uninstalling"): the leader-election Lease stays.
          assert.ok((await lease(env.cluster, NAMESPACE, RELEASE)) !== undefined);

          const log = accesses(env.cluster.auditLog, SA_USER);
          assert.ok(log.length > 0, 'the audit log recorded the ServiceAccount');
          const gs = grants(
            manifest.objects,
            { namespace: NAMESPACE, name: RELEASE },
            {
              'system:auth-delegator': [
                { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
                {
                  apiGroups: ['authorization.k8s.io'],
                  resources: ['subjectaccessreviews'],
                  verbs: ['create'],
                },
              ],
            },
          );
          // helm deletes the RBAC while the pods still terminate (as the kubelet gives them their grace
          // period), so a leader's Lease release on SIGTERM may be denied then; the Lease expires.
          const denied = log.filter(
            (a) => a.code === 403 && !(a.time >= uninstalledAt && a.resource === 'leases'),
          );
          assert.deepEqual(denied, [], 'requests the chart does not grant');
          const ungranted = log.filter((a) => a.code !== 403 && !gs.some((g) => allows(g, a)));
          assert.deepEqual([...new Set(ungranted.map((a) => `${a.verb} ${a.apiGroup}/${a.resource}`))], []);
          // Needed only in a case this suite does not provoke (docs/daemon.md, "RBAC"): client-go's
          // EventCorrelator patches an Event's count when the same Event repeats, or aggregates the
          // 11th similar one within 10 min into a patched "(combined from similar events)" Event; a
          // FailedToCreateRoute message carries the attempt's duration, so repeats here are new Events.
          const onlyIn: Record<string, string> = {
            'ClusterRole/cloud-route-controller: patch core/events': 'src/kube/event-correlator.test.ts',
          };
          const unused = grantedPermissions(gs)
            .filter((p) => !used(p, log) && onlyIn[p.key] === undefined)
            .map((p) => p.key);
          assert.deepEqual(unused, [], 'granted but never used');
        });
      }
    },
  );
}

function objectPath(apiVersion: string, kind: string, name: string, namespace?: string): string {
  const plural = (kind.toLowerCase() + 's').replace(/ys$/, 'ies');
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  return namespace === undefined
    ? `${base}/${plural}/${name}`
    : `${base}/namespaces/${namespace}/${plural}/${name}`;
}
