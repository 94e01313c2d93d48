// moto_server (EC2 emulator, TESTENV.md §7) for integration tests: one server
// per test file on a free loopback port, logging to a temp file.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, openSync, closeSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { skipUnless } from './prerequisites.ts';

export const MOTO_VERSION = '5.2.5';

export interface Moto {
  endpoint: string;
  stop(): Promise<void>;
  /** Drops every resource, as on a fresh server. */
  reset(): Promise<void>;
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** MOTO_SERVER, else the venv that scripts/moto.sh installs. */
export function motoServerPath(): string | undefined {
  const fromEnv = process.env.MOTO_SERVER;
  if (fromEnv) return executable(fromEnv) ? fromEnv : undefined;
  const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  const venv = process.env.MOTO_VENV || path.join(cache, 'cloud-route-controller', `moto-${MOTO_VERSION}`);
  const server = path.join(venv, 'bin', 'moto_server');
  return executable(server) ? server : undefined;
}

/**
 * `{ skip }` for node:test when moto is missing. In CI a missing emulator is a
 * failure, not a skip, so a broken install step cannot pass silently.
 */
export function motoSkip(): { skip: string | false } {
  return skipUnless(
    motoServerPath() !== undefined,
    'moto_server not installed: run scripts/moto.sh (or set MOTO_SERVER)',
  );
}

function motoEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  // moto reads any non-empty value, even "false", as on; the fixture's AMI ID is made up.
  delete env.MOTO_ENABLE_AMI_VALIDATION;
  return env;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

async function waitReady(
  endpoint: string,
  child: ChildProcess,
  logFile: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`moto_server exited (${child.exitCode ?? child.signalCode}); log:\n${tail(logFile)}`);
    }
    try {
      const res = await fetch(`${endpoint}/moto-api/data.json`, { signal: AbortSignal.timeout(2000) });
      await res.body?.cancel();
      if (res.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`moto_server not ready after ${timeoutMs} ms; log:\n${tail(logFile)}`);
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-30).join('\n');
  } catch {
    return '(no log)';
  }
}

/** testenv/moto/serve.py: moto_server with EC2's routes-per-table quota (RouteLimitExceeded). */
const LIMITED_SERVER = path.join(import.meta.dirname, '..', '..', 'testenv', 'moto', 'serve.py');

export interface MotoOptions {
  readyTimeoutMs?: number;
  /** Refuse a CreateRoute into a table that holds this many routes, as EC2's quota does. */
  routesPerTable?: number;
}

export async function startMoto(options: MotoOptions = {}): Promise<Moto> {
  const server = motoServerPath();
  if (server === undefined) throw new Error('moto_server not installed: run scripts/moto.sh');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'moto-'));
  const logFile = path.join(dir, 'moto.log');
  // A file, not a pipe: an undrained pipe would block moto once it fills.
  const logFd = openSync(logFile, 'w');
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const args = ['-H', '127.0.0.1', '-p', String(port)];
  const limited = options.routesPerTable !== undefined;
  // The venv's python runs the wrapper, with moto_server's arguments.
  const child = spawn(
    limited ? path.join(path.dirname(server), 'python3') : server,
    limited ? [LIMITED_SERVER, ...args] : args,
    {
      stdio: ['ignore', logFd, logFd],
      env: { ...motoEnv(), ...(limited ? { MOTO_ROUTES_PER_TABLE: String(options.routesPerTable) } : {}) },
    },
  );
  closeSync(logFd);
  // A test process that ends mid-run (or is interrupted) must not leave moto behind.
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const onSignal = (signal: NodeJS.Signals): void => {
    killOnExit();
    for (const s of signals) process.removeListener(s, onSignal);
    // Listening replaced the default action; re-raise so the process still dies of the signal.
    process.kill(process.pid, signal);
  };
  for (const s of signals) process.once(s, onSignal);

  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    process.removeListener('exit', killOnExit);
    for (const s of signals) process.removeListener(s, onSignal);
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exited(child);
    clearTimeout(timer);
    if (process.env.KEEP_MOTO_LOG) console.error(`moto log kept at ${logFile}`);
    else rmSync(dir, { recursive: true, force: true });
  };

  try {
    await waitReady(endpoint, child, logFile, options.readyTimeoutMs ?? 30_000);
  } catch (err) {
    await stop();
    throw err;
  }

  return {
    endpoint,
    stop,
    async reset() {
      const res = await fetch(`${endpoint}/moto-api/reset`, { method: 'POST' });
      await res.body?.cancel();
      if (!res.ok) throw new Error(`moto reset: HTTP ${res.status}`);
    },
  };
}
