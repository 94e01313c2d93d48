/**
 * Smoke test of the real-component test environment (etcd + kube-apiserver on loopback).
 * Skips visibly when the binaries are missing, fails when CI=true. Build them with
 * `npm run testenv:build`.
 */
import assert from 'node:assert/strict';
import * as https from 'node:https';
import { after, before, describe, test } from 'node:test';
import * as k8s from '@kubernetes/client-node';
import {
  apiRequest,
  kubeconfigIdentity,
  requireTestenv,
  startControlPlane,
  testenvBinaries,
} from '../support/controlplane.ts';
import type { ControlPlane } from '../support/controlplane.ts';

function nodeManifest(name: string, cidr: string): k8s.V1Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name },
    spec: { podCIDR: cidr, podCIDRs: [cidr], providerID: `aws:///us-east-1a/i-${name}` },
    status: { addresses: [{ type: 'InternalIP', address: '10.0.1.10' }] },
  };
}

function statusCode(err: unknown): number | undefined {
  return err instanceof k8s.ApiException ? err.code : undefined;
}

describe('control plane (real kube-apiserver + etcd)', { timeout: 240_000 }, () => {
  let cp: ControlPlane | undefined;
  let enabled = false;

  before(async () => {
    enabled = testenvBinaries() !== undefined;
    if (enabled) cp = await startControlPlane();
  });

  after(async () => {
    await cp?.stop();
  });

  test('serves /version v1.36.3, RBAC, nodes, restart and compaction', async (t) => {
    if (!enabled || cp === undefined) {
      requireTestenv(t);
      return;
    }
    const c = cp;
    try {
      console.log(`kube-apiserver ${c.versions.kubeApiserver}, etcd ${c.versions.etcd}`);
      assert.match(c.server, /^https:\/\/127\.0\.0\.1:\d+$/);
      assert.match(c.etcdUrl, /^http:\/\/127\.0\.0\.1:\d+$/);

      const version = await apiRequest(c.adminKubeconfig, 'GET', '/version');
      assert.equal(version.status, 200);
      const v = JSON.parse(version.body) as { gitVersion: string; major: string; minor: string };
      assert.equal(v.gitVersion, 'v1.36.3');
      assert.equal(c.versions.kubeApiserver, 'v1.36.3');

      // admin (O=system:masters) via @kubernetes/client-node, reading the kubeconfig file
      const adminKc = new k8s.KubeConfig();
      adminKc.loadFromFile(c.adminKubeconfig);
      const admin = adminKc.makeApiClient(k8s.CoreV1Api);
      const created = await admin.createNode({ body: nodeManifest('node-a', '10.244.1.0/24') });
      assert.deepEqual(created.spec?.podCIDRs, ['10.244.1.0/24']);
      assert.equal(created.status?.addresses?.[0]?.address, '10.0.1.10');
      // TaintNodesByCondition admission taints new Nodes not-ready
      assert.ok(created.spec?.taints?.some((x) => x.key === 'node.kubernetes.io/not-ready'));

      // podCIDRs are set-once: changing them is rejected by validation
      const patch = await apiRequest(
        c.adminKubeconfig,
        'PATCH',
        '/api/v1/nodes/node-a',
        JSON.stringify({ spec: { podCIDRs: ['10.244.9.0/24'], podCIDR: '10.244.9.0/24' } }),
        'application/strategic-merge-patch+json',
      );
      assert.equal(patch.status, 422, patch.body);

      // route-controller-ts has no rights without a binding
      const ctrlKc = new k8s.KubeConfig();
      ctrlKc.loadFromFile(c.controllerKubeconfig);
      assert.equal(ctrlKc.getCurrentUser()?.name, 'route-controller-ts');
      const ctrl = ctrlKc.makeApiClient(k8s.CoreV1Api);
      await assert.rejects(ctrl.listNode(), (err: unknown) => statusCode(err) === 403);
      const raw403 = await apiRequest(c.controllerKubeconfig, 'GET', '/api/v1/nodes');
      assert.equal(raw403.status, 403);
      const forbidden = JSON.parse(raw403.body) as { reason: string; message: string };
      assert.equal(forbidden.reason, 'Forbidden');
      assert.match(forbidden.message, /User "route-controller-ts" cannot list resource "nodes"/);

      // bind it to upstream's bootstrap ClusterRole: list works, delete still 403
      const rbac = adminKc.makeApiClient(k8s.RbacAuthorizationV1Api);
      const role = await rbac.readClusterRole({ name: 'system:controller:route-controller' });
      assert.ok(role.rules?.some((r) => r.resources?.includes('nodes') && r.verbs.includes('watch')));
      await rbac.createClusterRoleBinding({
        body: {
          metadata: { name: 'route-controller-ts' },
          roleRef: {
            apiGroup: 'rbac.authorization.k8s.io',
            kind: 'ClusterRole',
            name: 'system:controller:route-controller',
          },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'route-controller-ts' }],
        },
      });
      let listed: k8s.V1NodeList | undefined;
      for (let i = 0; i < 50 && listed === undefined; i++) {
        try {
          listed = await ctrl.listNode();
        } catch (err) {
          if (statusCode(err) !== 403) throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      assert.deepEqual(
        listed?.items.map((n) => n.metadata?.name),
        ['node-a'],
      );
      await assert.rejects(ctrl.deleteNode({ name: 'node-a' }), (err: unknown) => statusCode(err) === 403);

      // a freshly minted user with a group
      const viewerCfg = await c.userKubeconfig('someone', ['team-a']);
      const who = await apiRequest(viewerCfg, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'SelfSubjectReview',
      });
      assert.equal(who.status, 201, who.body);
      const review = JSON.parse(who.body) as { status: { userInfo: { username: string; groups: string[] } } };
      assert.equal(review.status.userInfo.username, 'someone');
      assert.ok(review.status.userInfo.groups.includes('team-a'));

      // restart the apiserver: same port, same etcd, data survives
      const t0 = Date.now();
      await c.restartApiserver();
      console.log(`apiserver restarted in ${Date.now() - t0} ms`);
      const after = await ctrl.listNode();
      assert.deepEqual(
        after.items.map((n) => n.metadata?.name),
        ['node-a'],
      );

      // compaction through etcd's JSON gateway
      const rev = await c.compactEtcd();
      assert.ok(rev > 1);
      const rv = Number(after.metadata?.resourceVersion);
      assert.ok(rv <= rev, `list RV ${rv} <= compacted revision ${rev}`);
      console.log(`compacted etcd at revision ${rev}`);
    } catch (err) {
      c.markFailed(String(err));
      throw err;
    }
  });
});

/** Opens a watch and resolves with the first event line (or rejects after timeoutMs). */
function firstWatchEvent(
  kubeconfig: string,
  urlPath: string,
  timeoutMs = 15_000,
): Promise<{ status: number; line: string }> {
  const id = kubeconfigIdentity(kubeconfig);
  return new Promise((resolve, reject) => {
    const req = https.request(
      new URL(urlPath, id.server),
      { ca: id.ca, cert: id.cert, key: id.key, agent: false },
      (res) => {
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buf += chunk;
          const nl = buf.indexOf('\n');
          if (nl >= 0) {
            resolve({ status: res.statusCode ?? 0, line: buf.slice(0, nl) });
            req.destroy();
          }
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, line: buf }));
      },
    );
    const timer = setTimeout(
      () => req.destroy(new Error(`no watch event within ${timeoutMs} ms`)),
      timeoutMs,
    );
    req.on('close', () => clearTimeout(timer));
    req.on('error', reject);
    req.end();
  });
}

describe('control plane with watch cache off: deterministic 410', { timeout: 240_000 }, () => {
  let cp: ControlPlane | undefined;
  let enabled = false;

  before(async () => {
    enabled = testenvBinaries() !== undefined;
    if (enabled) cp = await startControlPlane({ watchCacheDisabled: true });
  });

  after(async () => {
    await cp?.stop();
  });

  test('a watch from a compacted RV gets an ERROR event with code 410', async (t) => {
    if (!enabled || cp === undefined) {
      requireTestenv(t);
      return;
    }
    const c = cp;
    try {
      const created = await apiRequest(
        c.adminKubeconfig,
        'POST',
        '/api/v1/nodes',
        nodeManifest('node-b', '10.244.2.0/24'),
      );
      assert.equal(created.status, 201, created.body);
      const oldRv = (JSON.parse(created.body) as { metadata: { resourceVersion: string } }).metadata
        .resourceVersion;
      for (let i = 0; i < 3; i++) {
        const p = await apiRequest(
          c.adminKubeconfig,
          'PATCH',
          '/api/v1/nodes/node-b',
          JSON.stringify({ metadata: { labels: { step: String(i) } } }),
          'application/merge-patch+json',
        );
        assert.equal(p.status, 200, p.body);
      }
      const rev = await c.compactEtcd();
      assert.ok(rev > Number(oldRv));
      const ev = await firstWatchEvent(
        c.adminKubeconfig,
        `/api/v1/nodes?watch=true&resourceVersion=${oldRv}`,
      );
      assert.equal(ev.status, 200);
      const parsed = JSON.parse(ev.line) as {
        type: string;
        object: { kind: string; code: number; reason: string };
      };
      assert.equal(parsed.type, 'ERROR');
      assert.equal(parsed.object.code, 410);
      assert.equal(parsed.object.reason, 'Expired');
      console.log(
        `watch from RV ${oldRv} after compaction at ${rev}: ERROR ${parsed.object.code} ${parsed.object.reason}`,
      );
    } catch (err) {
      c.markFailed(String(err));
      throw err;
    }
  });
});
