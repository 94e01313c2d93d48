// What the numbers were measured on: CPU, cores, memory, load and versions.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export interface MachineInfo {
  readonly cpuModel: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly kernel: string;
  readonly loadAvgAtStart: readonly number[];
}

export interface Versions {
  node: string;
  kubeApiserver?: string;
  etcd?: string;
  go?: string;
  upstreamPeer: string;
  controller: string;
}

export function machineInfo(): MachineInfo {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cores: cpus.length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    kernel: `${os.type()} ${os.release()}`,
    loadAvgAtStart: os.loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

function goVersion(): string | undefined {
  try {
    return execFileSync('go', ['env', 'GOVERSION'], { encoding: 'utf8', timeout: 10_000 }).trim();
  } catch {
    return undefined;
  }
}

export function versions(): Versions {
  const pkg = JSON.parse(
    fs.readFileSync(path.resolve(import.meta.dirname, '..', '..', 'package.json'), 'utf8'),
  ) as { version: string };
  const go = goVersion();
  return {
    node: process.version,
    ...(go !== undefined ? { go } : {}),
    upstreamPeer: 'k8s.io/cloud-provider v0.37.2 (client-go v0.37.2)',
    controller: `cloud-route-controller ${pkg.version}`,
  };
}
