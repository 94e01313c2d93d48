// Where a test's prerequisite (a fake, an upstream binary, a Python venv) is: an environment
// variable, else what the project's script reports with `scripts/<name>.sh path`; and the
// `{ skip }` that turns a missing one into a skip, or a failure when CI=true.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { isExecutable } from './testenv-binaries.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

/** The `KEY=value` lines `bash scripts/<script> path` prints; undefined if the script fails. */
export function scriptPaths(script: string): Record<string, string> | undefined {
  try {
    const out = execFileSync('bash', [path.join(ROOT, 'scripts', script), 'path'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const found: Record<string, string> = {};
    for (const m of out.matchAll(/^([A-Z_]+)=(.*)$/gm)) found[m[1]!] = m[2]!;
    return found;
  } catch {
    return undefined;
  }
}

/** The executable `envVar` names, else the one `scripts/<script> path` reports as `envVar=`. */
export function executableFrom(envVar: string, script: string): string | undefined {
  const fromEnv = process.env[envVar];
  if (fromEnv) return isExecutable(fromEnv) ? fromEnv : undefined;
  const bin = scriptPaths(script)?.[envVar] ?? '';
  return bin !== '' && isExecutable(bin) ? bin : undefined;
}

/**
 * `{ skip }` for node:test: false when `present`, else `reason`; with CI=true a missing
 * prerequisite throws instead, so that a broken build or install cannot pass by skipping.
 */
export function skipUnless(present: boolean, reason: string): { skip: string | false } {
  if (present) return { skip: false };
  if (process.env['CI'] === 'true') throw new Error(`${reason}; required when CI=true`);
  return { skip: reason };
}

/** A prerequisite executable: where it is (executableFrom) and the `{ skip }` without it (skipUnless). */
export interface Prerequisite {
  path(): string | undefined;
  skip(): { skip: string | false };
}

/** `envVar`, else what `scripts/<script> path` reports; `missing` says how to build or install it. */
export function prerequisite(envVar: string, script: string, missing: string): Prerequisite {
  const find = (): string | undefined => executableFrom(envVar, script);
  return { path: find, skip: () => skipUnless(find() !== undefined, missing) };
}
