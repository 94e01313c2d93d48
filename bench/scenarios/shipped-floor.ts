// bench/peer/node-floor.mjs as a bench child process: a dependency-free Node
// program doing the daemon's I/O (LIST and WATCH of nodes over TLS, an HTTP
// and an HTTPS server), so that the shipped rows can say how much is Node.
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DAEMON_NODE_FLAGS } from '../../bin/node-flags.js';
import { loadKubeConnection } from '../../src/kube/kubeconfig.ts';

const FLOOR_SCRIPT = path.join(import.meta.dirname, '..', 'peer', 'node-floor.mjs');

export interface Floor {
  readonly pid: number;
  /** Resolves once its LIST is in (it prints "synced <n>"); rejects if it exits first. */
  readonly synced: Promise<void>;
  stop(): void;
}

/** Starts the floor with the credentials of `kubeconfig` (PEM files written under `dir`). */
export function startFloor(kubeconfig: string, dir: string, logFile: string): Floor {
  const conn = loadKubeConnection({ kubeconfig });
  const pem = (name: string, data: Buffer | undefined): string => {
    if (data === undefined) throw new Error(`${kubeconfig} has no ${name}`);
    fs.writeFileSync(path.join(dir, name), data);
    return path.join(dir, name);
  };
  const log = fs.openSync(logFile, 'w');
  // The executable's own V8 flags, so that the difference is code, not heap sizing.
  const child: ChildProcess = spawn(process.execPath, [...DAEMON_NODE_FLAGS, FLOOR_SCRIPT], {
    env: {
      ...process.env,
      FLOOR_SERVER: conn.server,
      FLOOR_CA: pem('ca.pem', conn.ca),
      FLOOR_CERT: pem('cert.pem', conn.cert),
      FLOOR_KEY: pem('key.pem', conn.key),
    },
    stdio: ['ignore', 'pipe', log],
  });
  fs.closeSync(log);
  const synced = new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      if (d.toString().startsWith('synced')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`node-floor exited (${code}) before its LIST`)));
  });
  synced.catch(() => {});
  return { pid: child.pid ?? -1, synced, stop: () => child.kill('SIGKILL') };
}
