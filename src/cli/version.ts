// The package version, read once from package.json (two levels up from src/cli or dist/cli).
import { readFileSync } from 'node:fs';
import path from 'node:path';

function readVersion(): string {
  try {
    const pkg = JSON.parse(
      readFileSync(path.join(import.meta.dirname, '..', '..', 'package.json'), 'utf8'),
    ) as { version?: unknown };
    return typeof pkg.version === 'string' ? `v${pkg.version}` : 'unknown';
  } catch {
    return 'unknown';
  }
}

export const VERSION = readVersion();
