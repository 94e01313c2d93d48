// Node objects as a kubelet and the node IPAM leave them: labels, annotations,
// capacity, four kubelet conditions, nodeInfo, ~40 images and managedFields.
// Their size drives informer decode cost and cache memory, so both peers get
// the same realistic objects.
import type { NodeSpecInput } from '../../src/cluster/memory-cluster.ts';

export interface NodeOptions {
  readonly dualStack?: boolean;
  /** Preset NetworkUnavailable=False/RouteCreated, as if routed before (idle, cost, memory). */
  readonly routed?: boolean;
  /** Kubelet-like bulk (images, managedFields, nodeInfo); off for tiny objects. */
  readonly realistic?: boolean;
  /** spec.providerID of node i, as the cloud node controller sets it (default: a made-up EC2 ID). */
  readonly providerID?: (i: number) => string;
}

export const CLUSTER_CIDR_V4 = '10.0.0.0/8';
export const CLUSTER_CIDR_V6 = 'fd00:10:244::/48';

/** Index 0..65535 → a /24 inside 10.0.0.0/8 that never touches 10.0.0.0/16. */
export function podCIDRv4(i: number): string {
  const n = i + 256;
  return `10.${(n >> 8) & 255}.${n & 255}.0/24`;
}

export function podCIDRv6(i: number): string {
  return `fd00:10:244:${(i + 1).toString(16)}::/64`;
}

export function nodeName(prefix: string, i: number): string {
  return `${prefix}-${String(i).padStart(5, '0')}`;
}

/**
 * Node i's InternalIP, inside 172.16.0.0/12 and never its network address
 * (a next hop in the `linux` and `hcloud` set-ups).
 */
export function nodeIP(i: number): string {
  const n = i + 1;
  return `172.${16 + ((n >> 16) & 15)}.${(n >> 8) & 255}.${n & 255}`;
}

export function podCIDRs(i: number, dualStack: boolean): string[] {
  return dualStack ? [podCIDRv4(i), podCIDRv6(i)] : [podCIDRv4(i)];
}

const IMAGES = [
  'registry.k8s.io/kube-proxy',
  'registry.k8s.io/pause',
  'docker.io/calico/node',
  'docker.io/calico/cni',
  'quay.io/prometheus/node-exporter',
  'registry.k8s.io/coredns/coredns',
  'docker.io/library/nginx',
  'docker.io/library/redis',
  'docker.io/library/postgres',
  'gcr.io/distroless/static',
  'ghcr.io/fluxcd/source-controller',
  'docker.io/grafana/promtail',
  'registry.k8s.io/metrics-server/metrics-server',
  'docker.io/bitnami/kubectl',
];

function hex(seed: number, len: number): string {
  let s = '';
  let x = (seed * 2654435761) >>> 0;
  while (s.length < len) {
    x = (x * 1103515245 + 12345) >>> 0;
    s += x.toString(16).padStart(8, '0');
  }
  return s.slice(0, len);
}

function images(i: number): object[] {
  const out: object[] = [];
  for (let k = 0; k < 40; k++) {
    const repo = IMAGES[k % IMAGES.length]!;
    const tag = `v1.${k % 7}.${(i + k) % 11}`;
    out.push({
      names: [`${repo}@sha256:${hex(i * 97 + k, 64)}`, `${repo}:${tag}`],
      sizeBytes: 5_000_000 + ((i * 31 + k * 7919) % 200_000_000),
    });
  }
  return out;
}

function managedFields(now: string): object[] {
  return [
    {
      manager: 'kubelet',
      operation: 'Update',
      apiVersion: 'v1',
      time: now,
      fieldsType: 'FieldsV1',
      fieldsV1: {
        'f:metadata': {
          'f:annotations': { '.': {}, 'f:volumes.kubernetes.io/controller-managed-attach-detach': {} },
          'f:labels': {
            '.': {},
            'f:beta.kubernetes.io/arch': {},
            'f:beta.kubernetes.io/os': {},
            'f:kubernetes.io/arch': {},
            'f:kubernetes.io/hostname': {},
            'f:kubernetes.io/os': {},
          },
        },
        'f:spec': { 'f:providerID': {} },
      },
    },
    {
      manager: 'kube-controller-manager',
      operation: 'Update',
      apiVersion: 'v1',
      time: now,
      fieldsType: 'FieldsV1',
      fieldsV1: {
        'f:metadata': { 'f:annotations': { 'f:node.alpha.kubernetes.io/ttl': {} } },
        'f:spec': { 'f:podCIDR': {}, 'f:podCIDRs': { '.': {}, 'v:"10.0.0.0/24"': {} } },
      },
    },
    {
      manager: 'kubelet',
      operation: 'Update',
      apiVersion: 'v1',
      time: now,
      fieldsType: 'FieldsV1',
      subresource: 'status',
      fieldsV1: {
        'f:status': {
          'f:allocatable': { 'f:cpu': {}, 'f:ephemeral-storage': {}, 'f:memory': {}, 'f:pods': {} },
          'f:capacity': { 'f:cpu': {}, 'f:ephemeral-storage': {}, 'f:memory': {}, 'f:pods': {} },
          'f:conditions': {
            'k:{"type":"DiskPressure"}': { 'f:lastHeartbeatTime': {}, 'f:message': {}, 'f:reason': {} },
            'k:{"type":"MemoryPressure"}': { 'f:lastHeartbeatTime': {}, 'f:message': {}, 'f:reason': {} },
            'k:{"type":"PIDPressure"}': { 'f:lastHeartbeatTime': {}, 'f:message': {}, 'f:reason': {} },
            'k:{"type":"Ready"}': {
              'f:lastHeartbeatTime': {},
              'f:lastTransitionTime': {},
              'f:message': {},
              'f:reason': {},
              'f:status': {},
            },
          },
          'f:images': {},
          'f:nodeInfo': { 'f:bootID': {}, 'f:kernelVersion': {}, 'f:osImage': {} },
        },
      },
    },
  ];
}

function condition(type: string, status: string, reason: string, message: string, now: string): object {
  return { type, status, reason, message, lastHeartbeatTime: now, lastTransitionTime: now };
}

/** A Node manifest for POST /api/v1/nodes (spec and status are both set on create). */
/** A MemoryCluster node that is already routed: Ready, and NetworkUnavailable False/RouteCreated. */
export function routedNodeSpec(
  name: string,
  i: number,
  podCIDRs: string[],
  now: Date,
  hostname = false,
): NodeSpecInput {
  return {
    name,
    podCIDRs,
    addresses: [
      { type: 'InternalIP', address: `172.16.${(i >> 8) & 255}.${i & 255}` },
      ...(hostname ? [{ type: 'Hostname', address: name }] : []),
    ],
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        reason: 'KubeletReady',
        lastHeartbeatTime: now,
        lastTransitionTime: now,
      },
      {
        type: 'NetworkUnavailable',
        status: 'False',
        reason: 'RouteCreated',
        message: 'RouteController created a route',
        lastHeartbeatTime: now,
        lastTransitionTime: now,
      },
    ],
  };
}

export function makeNode(prefix: string, i: number, opts: NodeOptions = {}): Record<string, unknown> {
  const name = nodeName(prefix, i);
  const cidrs = podCIDRs(i, opts.dualStack ?? false);
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const ip = nodeIP(i);
  const conditions: object[] = [];
  if (opts.routed === true) {
    conditions.push(
      condition('NetworkUnavailable', 'False', 'RouteCreated', 'RouteController created a route', now),
    );
  }
  const realistic = opts.realistic ?? true;
  if (realistic) {
    conditions.push(
      condition(
        'MemoryPressure',
        'False',
        'KubeletHasSufficientMemory',
        'kubelet has sufficient memory available',
        now,
      ),
      condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure', now),
      condition(
        'PIDPressure',
        'False',
        'KubeletHasSufficientPID',
        'kubelet has sufficient PID available',
        now,
      ),
    );
  }
  conditions.push(condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status', now));
  const metadata: Record<string, unknown> = {
    name,
    labels: {
      'kubernetes.io/hostname': name,
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'amd64',
      'beta.kubernetes.io/os': 'linux',
      'beta.kubernetes.io/arch': 'amd64',
      'node.kubernetes.io/instance-type': 'm5.xlarge',
      'topology.kubernetes.io/region': 'eu-central-1',
      'topology.kubernetes.io/zone': `eu-central-1${'abc'[i % 3]}`,
    },
    annotations: {
      'node.alpha.kubernetes.io/ttl': '0',
      'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
    },
  };
  if (realistic) metadata['managedFields'] = managedFields(now);
  const status: Record<string, unknown> = {
    addresses: [
      { type: 'InternalIP', address: ip },
      { type: 'Hostname', address: name },
    ],
    conditions,
  };
  if (realistic) {
    const res = { cpu: '4', memory: '16069132Ki', pods: '110', 'ephemeral-storage': '101430960Ki' };
    Object.assign(status, {
      capacity: { ...res, 'hugepages-1Gi': '0', 'hugepages-2Mi': '0' },
      allocatable: { ...res, cpu: '3920m', memory: '15352332Ki' },
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        machineID: hex(i, 32),
        systemUUID: `ec2${hex(i + 7, 29)}`,
        bootID: hex(i + 13, 32),
        kernelVersion: '6.8.0-1021-aws',
        osImage: 'Ubuntu 24.04.2 LTS',
        containerRuntimeVersion: 'containerd://2.0.5',
        kubeletVersion: 'v1.36.3',
        operatingSystem: 'linux',
        architecture: 'amd64',
      },
      images: images(i),
    });
  }
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata,
    spec: {
      podCIDR: cidrs[0],
      podCIDRs: cidrs,
      providerID: opts.providerID?.(i) ?? `aws:///eu-central-1a/i-${hex(i, 17)}`,
    },
    status,
  };
}
