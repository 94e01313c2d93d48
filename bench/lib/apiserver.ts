// The real kube-apiserver side of the benchmark: one control plane for the
// whole run (test/support/controlplane.ts), RBAC for both peers, an audit log
// that counts each peer's requests, and an admin driver that plays kubelets
// and node IPAM (creates Nodes, sends heartbeats, deletes everything between
// sessions).
import * as fs from 'node:fs';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import { kubeconfigIdentity, startControlPlane, type ControlPlane } from '../../test/support/controlplane.ts';

export const TS_USER = 'route-controller-ts';
export const GO_USER = 'route-controller-go';

export interface BenchCluster {
  readonly cp: ControlPlane;
  readonly admin: AdminClient;
  readonly tsKubeconfig: string;
  readonly goKubeconfig: string;
  readonly audit: AuditLog;
  stop(): Promise<void>;
}

export interface ApiResult {
  readonly status: number;
  readonly body: string;
  /** Date.now() when the response arrived. */
  readonly at: number;
}

export class AdminClient {
  private readonly agent: https.Agent;
  private readonly server: URL;

  constructor(kubeconfig: string, maxSockets = 16) {
    const id = kubeconfigIdentity(kubeconfig);
    this.server = new URL(id.server);
    this.agent = new https.Agent({ keepAlive: true, maxSockets, ca: id.ca, cert: id.cert, key: id.key });
  }

  request(
    method: string,
    urlPath: string,
    body?: unknown,
    contentType = 'application/json',
  ): Promise<ApiResult> {
    const data = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = https.request(
        {
          host: this.server.hostname,
          port: this.server.port,
          method,
          path: urlPath,
          agent: this.agent,
          headers: {
            Accept: 'application/json',
            ...(data === undefined
              ? {}
              : { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(data) }),
          },
          timeout: 60_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              body: Buffer.concat(chunks).toString('utf8'),
              at: Date.now(),
            }),
          );
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${urlPath}: timeout`)));
      req.on('error', reject);
      if (data !== undefined) req.write(data);
      req.end();
    });
  }

  async must(method: string, urlPath: string, body?: unknown, contentType?: string): Promise<ApiResult> {
    const r = await this.request(method, urlPath, body, contentType);
    if (r.status >= 300) throw new Error(`${method} ${urlPath}: HTTP ${r.status} ${r.body.slice(0, 300)}`);
    return r;
  }

  /** Creates a Node; returns its uid and when the create was acknowledged (its pod CIDR is visible). */
  async createNode(node: Record<string, unknown>): Promise<{ name: string; uid: string; visibleAt: number }> {
    const r = await this.must('POST', '/api/v1/nodes', node);
    const created = JSON.parse(r.body) as { metadata: { name: string; uid: string } };
    return { name: created.metadata.name, uid: created.metadata.uid, visibleAt: r.at };
  }

  /**
   * Creates `nodes` spread evenly over `spreadMs` (0: as fast as `concurrency` allows).
   * Resolves with one result per node, in input order.
   */
  async createNodes(
    nodes: readonly Record<string, unknown>[],
    spreadMs: number,
    concurrency = 16,
  ): Promise<{ name: string; uid: string; visibleAt: number }[]> {
    const out: { name: string; uid: string; visibleAt: number }[] = new Array(nodes.length);
    const t0 = Date.now();
    let next = 0;
    const worker = async (): Promise<void> => {
      for (;;) {
        const k = next++;
        if (k >= nodes.length) return;
        if (spreadMs > 0) {
          const due = t0 + (k * spreadMs) / nodes.length;
          const wait = due - Date.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        }
        out[k] = await this.createNode(nodes[k]!);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, nodes.length) }, worker));
    return out;
  }

  /** A kubelet heartbeat: Ready.lastHeartbeatTime moves via nodes/status, nothing else. */
  async heartbeat(name: string): Promise<void> {
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    await this.must(
      'PATCH',
      `/api/v1/nodes/${name}/status`,
      { status: { conditions: [{ type: 'Ready', lastHeartbeatTime: now }] } },
      'application/strategic-merge-patch+json',
    );
  }

  async countNodes(): Promise<number> {
    const r = await this.must('GET', '/api/v1/nodes?limit=1');
    const list = JSON.parse(r.body) as { items: unknown[]; metadata?: { remainingItemCount?: number } };
    return list.items.length + (list.metadata?.remainingItemCount ?? 0);
  }

  async deleteAllNodes(): Promise<void> {
    await this.must('DELETE', '/api/v1/nodes');
    for (let i = 0; i < 600; i++) {
      if ((await this.countNodes()) === 0) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error('nodes still present 120 s after deletecollection');
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Counts audit events (stage ResponseComplete) per user and verb/resource since the last mark. */
export class AuditLog {
  readonly file: string;
  private offset = 0;

  constructor(file: string) {
    this.file = file;
  }

  mark(): void {
    this.offset = fs.existsSync(this.file) ? fs.statSync(this.file).size : 0;
  }

  /** `{user: {"list nodes": n, "patch nodes/status": n, ...}}` since the last mark. */
  countSinceMark(): Record<string, Record<string, number>> {
    const out: Record<string, Record<string, number>> = {};
    if (!fs.existsSync(this.file)) return out;
    const size = fs.statSync(this.file).size;
    if (size <= this.offset) return out;
    const fd = fs.openSync(this.file, 'r');
    const buf = Buffer.alloc(size - this.offset);
    fs.readSync(fd, buf, 0, buf.length, this.offset);
    fs.closeSync(fd);
    for (const line of buf.toString('utf8').split('\n')) {
      if (line === '') continue;
      const e = JSON.parse(line) as {
        stage?: string;
        verb?: string;
        user?: { username?: string };
        objectRef?: { resource?: string; subresource?: string };
      };
      if (e.stage !== 'ResponseComplete') continue;
      const user = e.user?.username ?? '?';
      const res = e.objectRef?.resource ?? 'nonresource';
      const key = `${e.verb ?? '?'} ${res}${e.objectRef?.subresource ? '/' + e.objectRef.subresource : ''}`;
      const u = (out[user] ??= {});
      u[key] = (u[key] ?? 0) + 1;
    }
    return out;
  }
}

const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: Metadata
  users: ["${TS_USER}", "${GO_USER}"]
- level: None
`;

/** Binds both peers' users to the role upstream's route controller runs with (TESTENV.md section 5.5). */
export async function bindRouteControllers(admin: AdminClient): Promise<void> {
  for (const user of [TS_USER, GO_USER]) {
    await admin.must('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: `routebench-${user}` },
      roleRef: {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: 'ClusterRole',
        name: 'system:controller:route-controller',
      },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }],
    });
  }
}

/**
 * A BenchCluster on a control plane started elsewhere (e.g. test/support/kwok-cluster.ts) whose
 * apiserver audits both peers' users into `auditFile`; `stop` stops that control plane.
 */
export async function benchClusterOn(
  cp: ControlPlane,
  auditFile: string,
  stop: () => Promise<void>,
  maxSockets?: number,
): Promise<BenchCluster> {
  const admin = new AdminClient(cp.adminKubeconfig, maxSockets);
  try {
    await bindRouteControllers(admin);
    const goKubeconfig = await cp.userKubeconfig(GO_USER);
    return {
      cp,
      admin,
      tsKubeconfig: cp.controllerKubeconfig,
      goKubeconfig,
      audit: new AuditLog(auditFile),
      async stop() {
        admin.close();
        await stop();
      },
    };
  } catch (err) {
    admin.close();
    throw err;
  }
}

export async function startBenchCluster(): Promise<BenchCluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'routebench-audit-'));
  const policy = path.join(dir, 'policy.yaml');
  const auditFile = path.join(dir, 'audit.log');
  fs.writeFileSync(policy, AUDIT_POLICY);
  const cp = await startControlPlane({
    apiserverArgs: [
      `--audit-policy-file=${policy}`,
      `--audit-log-path=${auditFile}`,
      '--audit-log-maxsize=0',
    ],
  });
  try {
    return await benchClusterOn(cp, auditFile, async () => {
      await cp.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    });
  } catch (err) {
    await cp.stop();
    throw err;
  }
}
