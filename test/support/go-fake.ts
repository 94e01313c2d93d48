// A cloud fake built from Go (testenv/azure-fake, testenv/gce-fake) as the integration tests run
// it: one process per test file on a loopback port it picks itself and writes to an address
// file, logging to a temp file, with its `/_fake/` control endpoints as one JSON call.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface GoFake {
  /** http://127.0.0.1:PORT */
  readonly endpoint: string;
  /** One request to the fake's control API (`/_fake/<p>`): its JSON answer, or undefined. */
  control(method: string, p: string, body?: unknown): Promise<unknown>;
  /** SIGTERM, SIGKILL after 3 s; removes the log directory. */
  stop(): Promise<void>;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

async function waitForFile(name: string, file: string, child: ChildProcess, log: string): Promise<string> {
  for (let i = 0; i < 200; i++) {
    if (existsSync(file)) return readFileSync(file, 'utf8').trim();
    if (child.exitCode !== null)
      throw new Error(`${name} exited ${child.exitCode}:\n${readFileSync(log, 'utf8')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${name} did not start:\n${readFileSync(log, 'utf8')}`);
}

/** Starts `bin -listen 127.0.0.1:0 -addr-file <file>`; `name` (e.g. gce-fake) labels its errors. */
export async function startGoFake(name: string, bin: string): Promise<GoFake> {
  const dir = mkdtempSync(path.join(os.tmpdir(), `${name}-`));
  const log = path.join(dir, 'fake.log');
  const addrFile = path.join(dir, 'addr');
  const fd = openSync(log, 'w');
  const child = spawn(bin, ['-listen', '127.0.0.1:0', '-addr-file', addrFile], { stdio: ['ignore', fd, fd] });
  closeSync(fd);
  // A test process that ends mid-run must not leave the fake behind.
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const endpoint = `http://${await waitForFile(name, addrFile, child, log)}`;

  return {
    endpoint,
    async control(method, p, body) {
      const res = await fetch(`${endpoint}/_fake/${p}`, {
        method,
        ...(body !== undefined
          ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }
          : {}),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${name} ${method} ${p}: ${res.status} ${text}`);
      return text === '' ? undefined : (JSON.parse(text) as unknown);
    },
    async stop() {
      process.removeListener('exit', killOnExit);
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited(child);
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
