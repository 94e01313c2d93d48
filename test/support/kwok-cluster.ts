/**
 * A control plane whose nodes behave like real ones, for the deploy suite: etcd + kube-apiserver
 * (with an audit log of the route controller's ServiceAccount), kube-controller-manager running
 * only its node IPAM controller (pod CIDRs assigned after registration, both families), and kwok
 * as the kubelets (status heartbeats and node Leases; testenv/kwok/stages.yaml, which leaves
 * NetworkUnavailable to the route controller).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { startProcess, terminate, type Proc } from './child-processes.ts';
import { startControlPlane, type ControlPlane } from './controlplane.ts';
import { freePort, tail } from './kube-http.ts';
import { cacheBase, findCached, isExecutable, KUBE_VERSION } from './testenv-binaries.ts';

export const CLUSTER_CIDRS = ['10.244.0.0/16', 'fd00:10:244::/56'];
const ROOT = path.resolve(import.meta.dirname, '..', '..');
export const KWOK_STAGES = path.join(ROOT, 'testenv', 'kwok', 'stages.yaml');

export interface NodeAgentBinaries {
  kubeControllerManager: string;
  kwok: string;
}

/** kube-controller-manager and kwok from env or the cache of `scripts/testenv.sh build`. */
export function nodeAgentBinaries(): NodeAgentBinaries | undefined {
  const pick = (env: string, found: string | undefined): string | undefined => {
    const v = process.env[env];
    const p = v !== undefined && v !== '' ? v : found;
    return p !== undefined && isExecutable(p) ? p : undefined;
  };
  const kubeControllerManager = pick(
    'KUBE_CONTROLLER_MANAGER',
    findCached(`k8s-${KUBE_VERSION}-`, 'kube-controller-manager'),
  );
  const kwok = pick('KWOK', findCached('kwok-', 'kwok'));
  if (kubeControllerManager === undefined || kwok === undefined) return undefined;
  return { kubeControllerManager, kwok };
}

export interface Cluster {
  readonly cp: ControlPlane;
  /** One JSON object a line, written by the apiserver for the audited users. */
  readonly auditLog: string;
  readonly kcm: Proc;
  readonly kwok: Proc;
  stop(): Promise<void>;
}

export interface ClusterOptions {
  /** Users whose requests the audit log records (Metadata level). */
  auditedUsers: string[];
  /** kwok's status heartbeat period (the stages file's 5 min is a kubelet's; tests compress it). */
  heartbeatMs: number;
  /** kube-controller-manager's --cluster-cidr (default: dual-stack CLUSTER_CIDRS). */
  clusterCIDRs?: string[];
}

/** The stages file with the heartbeat delay replaced: [ms, ms + 20 %] like kwok's jitter. */
function stagesWithHeartbeat(file: string, heartbeatMs: number): string {
  const docs = parseAllDocuments(fs.readFileSync(file, 'utf8')).map(
    (d) => d.toJS() as Record<string, unknown>,
  );
  for (const d of docs) {
    const spec = d['spec'] as {
      delay?: { durationMilliseconds: number; jitterDurationMilliseconds: number };
    };
    if (spec.delay !== undefined) {
      spec.delay.durationMilliseconds = heartbeatMs;
      spec.delay.jitterDurationMilliseconds = Math.round(heartbeatMs * 1.2);
    }
  }
  return docs.map((d) => stringify(d)).join('---\n');
}

export async function startCluster(opts: ClusterOptions): Promise<Cluster> {
  const bins = nodeAgentBinaries();
  if (bins === undefined) {
    throw new Error(
      `kube-controller-manager/kwok missing (cache ${cacheBase()}): run \`bash scripts/testenv.sh build\``,
    );
  }
  const auditDir = fs.mkdtempSync(path.join(os.tmpdir(), 'routectl-audit-'));
  const policy = path.join(auditDir, 'policy.yaml');
  const auditLog = path.join(auditDir, 'audit.log');
  fs.writeFileSync(
    policy,
    stringify({
      apiVersion: 'audit.k8s.io/v1',
      kind: 'Policy',
      omitStages: ['RequestReceived'],
      rules: [{ level: 'Metadata', users: opts.auditedUsers }, { level: 'None' }],
    }),
  );
  const cp = await startControlPlane({
    apiserverArgs: [
      `--audit-policy-file=${policy}`,
      `--audit-log-path=${auditLog}`,
      '--audit-log-format=json',
      '--audit-log-mode=blocking',
    ],
  });
  const procs: Proc[] = [];
  try {
    const kcmLog = path.join(cp.dir, 'kube-controller-manager.log');
    const cidrs = opts.clusterCIDRs ?? CLUSTER_CIDRS;
    const kcm = startProcess(
      bins.kubeControllerManager,
      [
        `--kubeconfig=${cp.adminKubeconfig}`,
        '--controllers=node-ipam-controller',
        '--allocate-node-cidrs=true',
        `--cluster-cidr=${cidrs.join(',')}`,
        // One flag per family present (kube-controller-manager rejects the other's).
        ...(cidrs.some((c) => !c.includes(':')) ? ['--node-cidr-mask-size-ipv4=24'] : []),
        ...(cidrs.some((c) => c.includes(':')) ? ['--node-cidr-mask-size-ipv6=64'] : []),
        '--service-cluster-ip-range=10.0.0.0/24',
        '--leader-elect=false',
        '--secure-port=0',
        '--use-service-account-credentials=false',
        '--v=2',
      ],
      kcmLog,
    );
    procs.push(kcm);
    const stages = path.join(cp.dir, 'kwok-stages.yaml');
    fs.writeFileSync(stages, stagesWithHeartbeat(KWOK_STAGES, opts.heartbeatMs));
    const kwokLog = path.join(cp.dir, 'kwok.log');
    const kwok = startProcess(
      bins.kwok,
      [
        `--kubeconfig=${cp.adminKubeconfig}`,
        `--config=${stages}`,
        '--manage-all-nodes=true',
        `--server-address=127.0.0.1:${await freePort()}`,
        '--node-lease-duration-seconds=40',
      ],
      kwokLog,
    );
    procs.push(kwok);
    // Both start their informers within a second or two; a process that exited is a finding.
    await new Promise((r) => setTimeout(r, 1500));
    for (const [p, log] of [
      [kcm, kcmLog],
      [kwok, kwokLog],
    ] as const) {
      if (p.exitInfo !== undefined)
        throw new Error(`${log} exited (${JSON.stringify(p.exitInfo)}):\n${tail(log)}`);
    }
    return {
      cp,
      auditLog,
      kcm,
      kwok,
      async stop() {
        for (const p of procs) await terminate(p, 5000);
        await cp.stop();
        fs.rmSync(auditDir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    for (const p of procs) await terminate(p, 2000);
    cp.markFailed(String(err));
    await cp.stop();
    throw err;
  }
}
