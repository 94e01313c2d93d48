// The nodes scripts/informer-memory.ts creates: as a kubelet on EC2 writes them (~50 images,
// 5 conditions, 12 labels, annotations), about 14 KB of JSON each, unique per index.

export const hex = (i: number, len: number): string =>
  (i.toString(16) + 'f00dfeedbeef'.repeat(8)).slice(0, len);
/** An API server timestamp (whole seconds). */
export const ts = (ms: number): string => new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
const zone = (i: number): string => `us-east-1${'abc'[i % 3]}`;

/** Node number `i`, as the kubelet registers it. */
export function kubeletNode(i: number): object {
  const ip = `10.${(i >> 8) & 255}.${i & 255}.7`;
  const name = `ip-${ip.replaceAll('.', '-')}.ec2.internal`;
  const cidr = `10.${64 + (i >> 8)}.${i & 255}.0/24`;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: labels(i, name),
      annotations: {
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
        'csi.volume.kubernetes.io/nodeid': JSON.stringify({ 'ebs.csi.aws.com': `i-${hex(i, 17)}` }),
        'kubeadm.alpha.kubernetes.io/cri-socket': 'unix:///run/containerd/containerd.sock',
        'alpha.kubernetes.io/provided-node-ip': ip,
      },
    },
    spec: { podCIDR: cidr, podCIDRs: [cidr], providerID: `aws:///${zone(i)}/i-${hex(i, 17)}` },
    status: status(i, ip, name),
  };
}

function labels(i: number, name: string): Record<string, string> {
  return {
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
  };
}

function status(i: number, ip: string, name: string): object {
  const now = ts(Date.now());
  return {
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
  };
}
