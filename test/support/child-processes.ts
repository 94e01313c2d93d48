// Child processes of the control plane: started with output to files, killed on exit.
import { execFile, execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';

// ------------------------------------------------------------------------------------------------
// process bookkeeping

export const livePids = new Set<number>();
let handlersInstalled = false;
let pkiDirToRemove: string | undefined;

/** The certificate directory is removed with the processes at exit (unless KEEP_TESTENV=1). */
export function removeOnExit(dir: string): void {
  pkiDirToRemove = dir;
}

export function killAllSync(): void {
  for (const pid of livePids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  livePids.clear();
  if (pkiDirToRemove !== undefined && process.env.KEEP_TESTENV !== '1') {
    try {
      fs.rmSync(pkiDirToRemove, { recursive: true, force: true });
    } catch {
      // best effort
    }
  }
}

export function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', killAllSync);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(sig, () => {
      killAllSync();
      // Re-raise with the default disposition (this listener was a once-listener).
      process.kill(process.pid, sig);
    });
  }
}

export interface Proc {
  child: ChildProcess;
  pid: number;
  exited: Promise<void>;
  exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
}

let setprivAvailable: boolean | undefined;

export function hasSetpriv(): boolean {
  if (setprivAvailable === undefined) {
    try {
      execFileSync('setpriv', ['--help'], { stdio: 'ignore', timeout: 5000 });
      setprivAvailable = true;
    } catch {
      setprivAvailable = false;
    }
  }
  return setprivAvailable;
}

/** Starts a child with stdout/stderr appended to logFile. With setpriv, the child dies with us. */
export function startProcess(bin: string, args: string[], logFile: string): Proc {
  installHandlers();
  fs.appendFileSync(logFile, `\n==== ${new Date().toISOString()} ${bin} ${args.join(' ')}\n`);
  const fd = fs.openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    const [cmd, argv] = hasSetpriv()
      ? ['setpriv', ['--pdeathsig', 'SIGKILL', '--', bin, ...args]]
      : [bin, args];
    child = spawn(cmd, argv, { stdio: ['ignore', fd, fd], env: childEnv() });
  } finally {
    fs.closeSync(fd);
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error(`failed to start ${bin}`);
  livePids.add(pid);
  const proc: Proc = {
    child,
    pid,
    exitInfo: undefined,
    exited: new Promise<void>((resolve) => {
      child.once('exit', (code, signal) => {
        proc.exitInfo = { code, signal };
        livePids.delete(pid);
        resolve();
      });
      child.once('error', () => {
        proc.exitInfo ??= { code: -1, signal: null };
        livePids.delete(pid);
        resolve();
      });
    }),
  };
  return proc;
}

export function childEnv(): NodeJS.ProcessEnv {
  // Loopback only: never let a proxy setting route 127.0.0.1 traffic elsewhere.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NO_PROXY: '127.0.0.1,localhost',
    no_proxy: '127.0.0.1,localhost',
  };
  delete env.HTTP_PROXY;
  delete env.HTTPS_PROXY;
  delete env.http_proxy;
  delete env.https_proxy;
  return env;
}

export async function terminate(proc: Proc, graceMs = 10_000): Promise<void> {
  if (proc.exitInfo !== undefined) return;
  try {
    process.kill(proc.pid, 'SIGTERM');
  } catch {
    // gone already
  }
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    proc.exited.then(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), graceMs);
    }),
  ]);
  clearTimeout(timer);
  if (timedOut) {
    try {
      process.kill(proc.pid, 'SIGKILL');
    } catch {
      // gone already
    }
    await proc.exited;
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export function run(cmd: string, args: string[], cwd?: string): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd, encoding: 'utf8', timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')} failed: ${err.message}\n${stderr}`));
      else resolve({ stdout, stderr });
    });
  });
}
