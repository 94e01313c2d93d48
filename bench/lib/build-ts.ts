// Compiles the TS peer and the sources it imports to plain JavaScript, so
// memory can also be measured as shipped (dist/ JS) rather than through
// Node's type stripping, which adds its own ~18 MB.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

const repoRoot = path.resolve(import.meta.dirname, '..', '..');

/**
 * Returns the compiled peer's path, or undefined when tsc produced nothing.
 * It is built inside the repository (whatever --out says), because the
 * compiled files resolve their packages from the repository's node_modules.
 */
export function compileTsPeer(): string | undefined {
  const buildDir = path.join(repoRoot, 'node_modules', '.cache', 'cloud-route-controller-bench');
  fs.mkdirSync(buildDir, { recursive: true });
  const cfg = path.join(buildDir, 'tsconfig.json');
  fs.writeFileSync(
    cfg,
    JSON.stringify({
      extends: path.join(repoRoot, 'tsconfig.json'),
      compilerOptions: {
        noEmit: false,
        outDir: buildDir,
        rootDir: repoRoot,
        declaration: false,
        sourceMap: false,
      },
      files: [path.join(repoRoot, 'bench', 'peer', 'ts-route.ts')],
      include: [],
    }),
  );
  try {
    execFileSync(
      process.execPath,
      [path.join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', cfg],
      {
        stdio: 'ignore',
        timeout: 300_000,
      },
    );
  } catch {
    // Type errors elsewhere in the tree still emit JavaScript; only a missing file counts.
  }
  const js = path.join(buildDir, 'bench', 'peer', 'ts-route.js');
  return fs.existsSync(js) ? js : undefined;
}
