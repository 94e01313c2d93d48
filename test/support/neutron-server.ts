// neutron-server for the tests: where scripts/neutron.sh installed it, and starting
// testenv/neutron/serve.py until it prints its URL.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Proc } from './child-processes.ts';
import { prerequisite } from './prerequisites.ts';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');

// NEUTRON_PYTHON, else the venv scripts/neutron.sh installed; its tests
// skip without it, and fail with CI=true.
const NEUTRON_PYTHON = prerequisite(
  'NEUTRON_PYTHON',
  'neutron.sh',
  'neutron not installed: run scripts/neutron.sh (or set NEUTRON_PYTHON)',
);
export const neutronPython = NEUTRON_PYTHON.path;
export const neutronSkip = NEUTRON_PYTHON.skip;

/** Waits for serve.py's `NEUTRON_READY <url>` line in its log. */
export async function waitForReady(log: string, proc: Proc, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const text = fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '';
    const m = /NEUTRON_READY (http:\/\/127\.0\.0\.1:\d+)/.exec(text);
    if (m) return m[1]!;
    if (proc.exitInfo !== undefined) throw new Error(`neutron-server exited: ${text.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(
    `neutron-server did not start in ${timeoutMs} ms: ${fs.readFileSync(log, 'utf8').slice(-3000)}`,
  );
}
