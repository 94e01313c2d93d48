// Bundles the compiled program (dist/, after `npm run build`) with what it uses of its
// dependencies, for the container image: `node scripts/bundle-image.ts OUT_DIR`. OUT_DIR gets
// dist/ (the program) and vendor/ (the dependencies' modules), which the image ships in /app;
// node_modules keeps only the packages this leaves external (below).
//
// Why: the image's node_modules held 106.9 MB for ~3 MB of code the daemon runs; most of it is
// what a package ships beside its code (both CommonJS and ES builds, the Azure network SDK's
// hundreds of operations, the Kubernetes client's generated models for every API group). Rollup
// keeps only the modules and exports the program reaches (11 MB). One file per module
// (preserveModules), not merged chunks: a module still loads when the program first imports it,
// as from node_modules (merged chunks load modules the program would load later or never: in
// the same bench/image-facts.ts run on 2026-12-07 they cost +2.2 and +3.0 MB resident at 100
// and 1,000 nodes and +29 ms per `--version` against the unbundled image). Every dist/ file keeps its path (src/cli/version.ts
// reads ../../package.json; src/cli/main.ts imports ../sim/cli.js by a computed name), and each
// plug-in is still a dynamic import, so a daemon loads the code of its own cloud only.
//
// External: Node's built-in modules; `yaml` and `prom-client`, which the program loads
// synchronously on first use through createRequire (src/yaml/lazy.ts, src/controller/metrics.ts),
// a call a bundler does not follow; and `pino`, which every daemon loads at start: CommonJS
// turned into ES modules costs 1.7 MB more resident than Node's CommonJS loader running the
// package itself (importing src/log/logger.ts: 11.0 against 9.3 MB, 2026-12-07). The image keeps
// these three and their dependencies in node_modules (the Dockerfile reads
// OUT_DIR/dist/external-packages.json).
//
// Writes OUT_DIR/dist/bundled-packages.json: the npm packages whose code the bundle holds (the aws
// plug-in's dist/cloud/aws/ec2-bundled-packages.json included), for the image's SBOM
// (scripts/image.sh sbom).
import * as fs from 'node:fs';
import { builtinModules } from 'node:module';
import * as path from 'node:path';
import commonjsModule from '@rollup/plugin-commonjs';
import jsonModule from '@rollup/plugin-json';
import { nodeResolve } from '@rollup/plugin-node-resolve';
import { rollup } from 'rollup';
import type { Plugin } from 'rollup';

// The plug-ins' types describe their CommonJS builds; the ES builds Node loads export the
// plug-in itself as default.
const json = jsonModule as unknown as typeof jsonModule.default;
const commonjs = commonjsModule as unknown as typeof commonjsModule.default;

export const EXTERNAL_PACKAGES = ['yaml', 'prom-client', 'pino'] as const;
const BUNDLED_PACKAGES = 'bundled-packages.json';
const EXTERNAL_LIST = 'external-packages.json';

interface PackageRef {
  name: string;
  version: string;
  license?: string;
}

const root = path.resolve(import.meta.dirname, '..');
const dist = path.join(root, 'dist');

/** The npm package a bundled module file belongs to (its nearest package.json with a name). */
function packageOf(file: string): PackageRef | undefined {
  for (
    let dir = path.dirname(file);
    dir.includes(`${path.sep}node_modules${path.sep}`);
    dir = path.dirname(dir)
  ) {
    const manifest = path.join(dir, 'package.json');
    if (!fs.existsSync(manifest)) continue;
    const pkg = JSON.parse(fs.readFileSync(manifest, 'utf8')) as Partial<PackageRef>;
    // Nested package.json files ({"type": "module"}) name no package.
    if (pkg.name === undefined || pkg.version === undefined) continue;
    return {
      name: pkg.name,
      version: pkg.version,
      ...(typeof pkg.license === 'string' ? { license: pkg.license } : {}),
    };
  }
  return undefined;
}

// KubeClient.coreV1Api(), a library method the daemon never calls, imports client-node's whole
// namespace: its generated API and models for every API group (15.6 MB bundled). The image
// leaves that one import unresolved, so there the method rejects with ERR_MODULE_NOT_FOUND.
// (A kubeconfig that needs client-node's KubeConfig still gets it: src/kube/client-node-config.ts
// imports it statically and is bundled.)
const libraryOnly: Plugin = {
  name: 'library-only-imports',
  resolveDynamicImport: (spec, importer) =>
    spec === '@kubernetes/client-node' && importer?.endsWith(path.join('kube', 'kube-client.js'))
      ? false
      : null,
};

/**
 * Where a module goes, below OUT_DIR: the program's own under dist/ (entries by their input names),
 * dependencies' under vendor/ (not node_modules/, where npm would take them for installed
 * packages; /app/package.json's "type": "module" makes them ES modules), rollup's helpers under
 * vendor/_virtual/.
 */
function placeOf(name: string, isEntry: boolean): string {
  if (isEntry) return `dist/${name}`;
  if (name.startsWith('dist/')) return name;
  if (name.startsWith('node_modules/'))
    return `vendor/${name.slice('node_modules/'.length).replaceAll('/node_modules/', '/vendor/')}`;
  return `vendor/${name}`;
}

function isExternal(id: string): boolean {
  if (id.startsWith('node:') || builtinModules.includes(id)) return true;
  return EXTERNAL_PACKAGES.some((p) => id === p || id.startsWith(`${p}/`));
}

async function main(outDir: string): Promise<void> {
  for (const f of ['cli/main.js', 'sim/cli.js', 'cloud/aws/ec2-bundled-packages.json']) {
    if (!fs.existsSync(path.join(dist, f))) {
      throw new Error(`dist/${f} is missing: run \`npm run build\` first`);
    }
  }
  const warnings = new Map<string, number>();
  const bundle = await rollup({
    input: { 'cli/main': path.join(dist, 'cli/main.js'), 'sim/cli': path.join(dist, 'sim/cli.js') },
    external: isExternal,
    plugins: [
      libraryOnly,
      nodeResolve({ exportConditions: ['node', 'import', 'default'], preferBuiltins: true }),
      // strictRequires: every CommonJS module runs when first required, in the order Node would
      // run it (several dependencies rely on that order, or on require cycles).
      commonjs({ strictRequires: true, ignoreDynamicRequires: true }),
      json(),
    ],
    onwarn: (w) => {
      const key = w.code ?? 'WARNING';
      if (w.code === 'UNRESOLVED_IMPORT') process.stderr.write(`bundle-image: ${w.message}\n`);
      warnings.set(key, (warnings.get(key) ?? 0) + 1);
    },
  });
  fs.rmSync(outDir, { recursive: true, force: true });
  const { output } = await bundle.write({
    dir: outDir,
    format: 'es',
    preserveModules: true,
    preserveModulesRoot: root,
    entryFileNames: (c) => `${placeOf(c.name, c.isEntry)}.js`,
    banner: '// Generated by scripts/bundle-image.ts from dist/ and its dependencies.',
  });
  await bundle.close();

  const packages = new Map<string, PackageRef>();
  const bytesByPackage = new Map<string, number>();
  const awsBundled = JSON.parse(
    fs.readFileSync(path.join(dist, 'cloud/aws/ec2-bundled-packages.json'), 'utf8'),
  ) as PackageRef[];
  for (const p of awsBundled) packages.set(`${p.name}@${p.version}`, p);
  for (const o of output) {
    if (o.type !== 'chunk') continue;
    for (const id of Object.keys(o.modules)) {
      const pkg = id.startsWith('\0') ? undefined : packageOf(id.replace(/\?.*$/, ''));
      if (pkg !== undefined) packages.set(`${pkg.name}@${pkg.version}`, pkg);
      const key = pkg?.name ?? 'this project';
      bytesByPackage.set(key, (bytesByPackage.get(key) ?? 0) + o.modules[id]!.renderedLength);
    }
  }
  const sorted = [...packages.values()].sort((a, b) => a.name.localeCompare(b.name));
  fs.writeFileSync(path.join(outDir, 'dist', BUNDLED_PACKAGES), `${JSON.stringify(sorted, null, 2)}\n`);
  fs.writeFileSync(path.join(outDir, 'dist', EXTERNAL_LIST), `${JSON.stringify(EXTERNAL_PACKAGES)}\n`);
  const bytes = output.reduce((n, o) => n + (o.type === 'chunk' ? Buffer.byteLength(o.code) : 0), 0);
  const top = [...bytesByPackage].sort((a, b) => b[1] - a[1]).slice(0, 12);
  process.stdout.write(
    `bundle-image: largest: ${top.map(([n, b]) => `${n} ${(b / 2 ** 20).toFixed(2)}`).join(', ')} (MiB)\n`,
  );
  process.stdout.write(
    `bundle-image: ${output.length} files, ${(bytes / 2 ** 20).toFixed(1)} MiB, ${packages.size} packages; warnings ${JSON.stringify(Object.fromEntries(warnings))}\n`,
  );
}

if (import.meta.main) {
  const out = process.argv[2];
  if (out === undefined) {
    process.stderr.write('usage: node scripts/bundle-image.ts OUT_DIR\n');
    process.exit(2);
  }
  await main(path.resolve(out));
}
