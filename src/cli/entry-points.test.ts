// Every command-line entry point, run as a user runs it (a process): `--help`
// prints the usage on stdout and exits 0; a bad flag prints `error:` lines and
// no stack trace, and exits with the program's code for a misuse: 1 for the
// daemon's executable (R60), 2 for the standalone programs (src/cli/script-args.ts).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { describe, it } from 'node:test';

const ROOT = path.join(import.meta.dirname, '..', '..');

interface Entry {
  /** The file and the arguments before the flags under test. */
  readonly argv: readonly string[];
  /** A phrase of its usage. */
  readonly usage: RegExp;
  readonly badFlagCode: number;
  /** The daemon prints every problem at once (R60): the bad flag is the first of several lines. */
  readonly oneLine: boolean;
}

const DAEMON = 'bin/cloud-route-controller.js';
const ENTRIES: readonly Entry[] = [
  { argv: [DAEMON], usage: /^Usage:/m, badFlagCode: 1, oneLine: false },
  { argv: [DAEMON, 'run'], usage: /^Run the route controller/, badFlagCode: 1, oneLine: false },
  { argv: [DAEMON, 'plan'], usage: /^Plan: one dry-run reconcile/, badFlagCode: 1, oneLine: false },
  {
    argv: [DAEMON, 'simulate'],
    usage: /^Usage: cloud-route-controller simulate/,
    badFlagCode: 1,
    oneLine: true,
  },
  { argv: ['bench/run.ts'], usage: /^Usage: npm run bench/, badFlagCode: 2, oneLine: true },
  { argv: ['bench/report.ts'], usage: /^Usage: npx node bench\/report.ts/, badFlagCode: 2, oneLine: true },
  {
    argv: ['bench/check-results.ts'],
    usage: /^Usage: node bench\/check-results.ts/,
    badFlagCode: 2,
    oneLine: true,
  },
  {
    argv: ['bench/image-facts.ts'],
    usage: /^Usage: node bench\/image-facts.ts/,
    badFlagCode: 2,
    oneLine: true,
  },
  {
    argv: ['bench/import-peak.ts'],
    usage: /^Usage: node bench\/import-peak.ts/,
    badFlagCode: 2,
    oneLine: true,
  },
  { argv: ['test/soak/soak.ts'], usage: /^Usage: npm run soak/m, badFlagCode: 2, oneLine: true },
  {
    argv: ['scripts/informer-memory.ts'],
    usage: /^Usage: npx node scripts\/informer-memory.ts/,
    badFlagCode: 2,
    oneLine: true,
  },
  { argv: ['scripts/verify-docs.ts'], usage: /^Usage: npm run docs:verify/, badFlagCode: 2, oneLine: true },
  { argv: ['scripts/gen-docs.ts'], usage: /^Usage: npm run docs:gen/, badFlagCode: 2, oneLine: true },
];

interface Ran {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function run(args: readonly string[]): Promise<Ran> {
  return new Promise((resolve) => {
    // The daemon's executable re-executes itself with V8 flags; give it a clean environment for that.
    const env = { ...process.env, NODE_OPTIONS: '', KUBECONFIG: '', KUBERNETES_SERVICE_HOST: '' };
    execFile(process.execPath, [...args], { cwd: ROOT, env, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
      resolve({ code, stdout, stderr });
    });
  });
}

/** A stack frame as Node prints one ("    at f (file:1:2)"). */
const STACK = /^\s+at .+:\d+:\d+\)?$/m;

describe('command-line entry points', { concurrency: 2 }, () => {
  for (const e of ENTRIES) {
    const name = e.argv.join(' ');
    it(`${name} --help prints its usage and exits 0`, async () => {
      const r = await run([...e.argv, '--help']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, e.usage);
      assert.equal(r.stderr, '');
    });
    it(`${name} --no-such-flag prints an error line, no stack trace, and exits ${e.badFlagCode}`, async () => {
      const r = await run([...e.argv, '--no-such-flag']);
      assert.equal(r.code, e.badFlagCode, r.stderr);
      assert.doesNotMatch(r.stderr, STACK);
      const lines = r.stderr.trimEnd().split('\n');
      assert.match(lines[0]!, /^error: .*--no-such-flag/);
      if (e.oneLine) assert.equal(lines.length, 1, r.stderr);
      else for (const l of lines) assert.match(l, /^error: /);
      assert.doesNotMatch(r.stdout, /Usage/);
    });
  }
  it(`${DAEMON} version takes no arguments`, async () => {
    const r = await run([DAEMON, 'version', '--no-such-flag']);
    assert.equal(r.code, 1);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^error: "version" takes no arguments/);
  });
});

/** The shell scripts a developer runs (README, docs/, testenv/README.md): the same contract, exit 2. */
const SCRIPTS: readonly { readonly file: string; readonly usage: RegExp }[] = [
  { file: 'scripts/azure-fake.sh', usage: /^usage: scripts\/azure-fake.sh build\|path/ },
  { file: 'scripts/gce-fake.sh', usage: /^usage: scripts\/gce-fake.sh build\|path/ },
  { file: 'scripts/aws-upstream.sh', usage: /^usage: scripts\/aws-upstream.sh build\|path/ },
  { file: 'scripts/gce-upstream.sh', usage: /^usage: scripts\/gce-upstream.sh build\|path/ },
  { file: 'scripts/keystone.sh', usage: /^usage: scripts\/keystone.sh \[install\|path\]/ },
  { file: 'scripts/moto.sh', usage: /^usage: scripts\/moto.sh \[install\|path\]/ },
  { file: 'scripts/neutron.sh', usage: /^usage: scripts\/neutron.sh \[install\|path\]/ },
  { file: 'scripts/monitoring-tools.sh', usage: /^usage: scripts\/monitoring-tools.sh build\|paths/ },
  { file: 'scripts/testenv.sh', usage: /^usage: scripts\/testenv.sh build\|paths/ },
  { file: 'scripts/bench-build-upstream.sh', usage: /^Builds the upstream route-controller peer/ },
  { file: 'scripts/flake-hunt.sh', usage: /^Flake hunt: runs the real-component suites/ },
  { file: 'scripts/netns-prereqs.sh', usage: /^Prerequisites of the network-namespace tests/ },
  { file: 'scripts/integration.sh', usage: /^Integration tests against a real kube-apiserver/ },
  { file: 'scripts/monitoring.sh', usage: /^The chart and monitoring suite/ },
  { file: 'scripts/deploy.sh', usage: /^The deploy suite \(test\/deploy\)/ },
  { file: 'scripts/image.sh', usage: /^The container image, built with the project's own Dockerfile/ },
];

function bash(args: readonly string[]): Promise<Ran> {
  return new Promise((resolve) => {
    execFile('bash', [...args], { cwd: ROOT, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
      resolve({ code, stdout, stderr });
    });
  });
}

describe('shell scripts', { concurrency: 2 }, () => {
  for (const s of SCRIPTS) {
    it(`${s.file} --help prints its usage and exits 0, doing nothing else`, async () => {
      const r = await bash([s.file, '--help']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, s.usage);
      assert.equal(r.stderr, '');
    });
    it(`${s.file} --no-such-flag prints one error line and exits 2`, async () => {
      const r = await bash([s.file, '--no-such-flag']);
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /^error: .*--no-such-flag/);
      assert.equal(r.stderr.trimEnd().split('\n').length, 1, r.stderr);
      assert.equal(r.stdout, '');
    });
  }
});
