// Runs the provider against a fake `ip` (a script given as ipCommand), so the
// execFile path is covered: argument passing, stdout/stderr, exit codes, abort.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { errorKind } from '../../core/errors.ts';
import type { CallOptions, NodeLister, Route } from '../../core/types.ts';
import { createIpRunner } from './exec.ts';
import { linuxProviderFactory } from './index.ts';
import type { LinuxRoutes } from './index.ts';

interface Rule {
  match: string; // regular expression on the space-joined arguments
  stdout?: string;
  stderr?: string;
  code?: number;
  sleepMs?: number;
}

let dir: string;
let fakeIp: string;

// Plain JavaScript run by this same Node binary; the rules file is re-read on
// every call so each test can set its own.
const SCRIPT = `
const fs = require('node:fs');
const dir = process.env.FAKE_IP_DIR;
const line = process.argv.slice(2).join(' ');
const started = Date.now();
let rules = [];
try { rules = JSON.parse(fs.readFileSync(dir + '/rules.json', 'utf8')); } catch {}
const rule = rules.find((r) => new RegExp(r.match).test(line)) || {};
const finish = () => {
  fs.appendFileSync(dir + '/calls.log', JSON.stringify({ line, started, ended: Date.now() }) + '\\n');
  if (rule.stdout !== undefined) process.stdout.write(rule.stdout);
  else if (line.includes(' show ')) process.stdout.write('[]\\n');
  if (rule.stderr) process.stderr.write(rule.stderr);
  process.exit(rule.code || 0);
};
if (rule.sleepMs) setTimeout(finish, rule.sleepMs); else finish();
`;

function setRules(rules: Rule[]): void {
  writeFileSync(path.join(dir, 'rules.json'), JSON.stringify(rules));
  rmSync(path.join(dir, 'calls.log'), { force: true });
}

function calls(): { line: string; started: number; ended: number }[] {
  let text = '';
  try {
    text = readFileSync(path.join(dir, 'calls.log'), 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { line: string; started: number; ended: number });
}

const nodes: NodeLister = {
  get: () => undefined,
  list: () => [
    { metadata: { name: 'n1' }, status: { addresses: [{ type: 'InternalIP', address: '172.30.1.2' }] } },
  ],
};

function opts(signal: AbortSignal = new AbortController().signal): CallOptions {
  return { signal, reconcile: { id: 'r', scratch: new Map() } };
}

const ROUTE: Route = {
  name: '',
  targetNode: 'n1',
  targetNodeAddresses: [{ type: 'InternalIP', address: '172.30.1.2' }],
  enableNodeAddresses: false,
  destinationCIDR: '10.244.1.0/24',
  blackhole: false,
};

async function provider(): Promise<LinuxRoutes> {
  const p = await linuxProviderFactory(JSON.stringify({ ipCommand: fakeIp, netns: 'rtr', table: 7 }), nodes);
  return p.routes() as LinuxRoutes;
}

describe('linux provider through execFile of a fake ip', () => {
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'fake-ip-'));
    fakeIp = path.join(dir, 'ip');
    writeFileSync(fakeIp, `#!${process.execPath}\n${SCRIPT}`);
    chmodSync(fakeIp, 0o755);
    process.env.FAKE_IP_DIR = dir;
  });
  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('passes arguments without a shell and parses stdout', async () => {
    setRules([
      {
        match: '-4 -json route show table 7 proto 200$',
        stdout: '[{"dst":"10.244.1.0/24","gateway":"172.30.1.2","dev":"vn1","flags":[]}]\n',
      },
    ]);
    const routes = await (await provider()).listRoutes('k', opts());
    assert.deepEqual(
      routes.map((r) => [r.destinationCIDR, r.targetNode, r.blackhole]),
      [['10.244.1.0/24', 'n1', false]],
    );
    assert.deepEqual(
      calls()
        .map((c) => c.line)
        .sort(),
      ['-n rtr -4 -json route show table 7 proto 200', '-n rtr -6 -json route show table 7 proto 200'],
    );
  });

  it('creates with replace and deletes a missing route successfully', async () => {
    setRules([{ match: ' del ', stderr: 'RTNETLINK answers: No such process\n', code: 2 }]);
    const r = await provider();
    await r.createRoute('k', 'uid', ROUTE, opts());
    await r.deleteRoute('k', ROUTE, opts());
    const lines = calls().map((c) => c.line);
    assert.ok(lines.includes('-n rtr -4 route replace 10.244.1.0/24 via 172.30.1.2 table 7 proto 200'));
    assert.equal(lines.at(-1), '-n rtr -4 route del 10.244.1.0/24 via 172.30.1.2 table 7 proto 200');
  });

  it('maps EPERM to permanent with a CAP_NET_ADMIN hint', async () => {
    setRules([{ match: 'replace', stderr: 'RTNETLINK answers: Operation not permitted\n', code: 2 }]);
    await assert.rejects((await provider()).createRoute('k', 'uid', ROUTE, opts()), (e: unknown) => {
      assert.equal(errorKind(e), 'permanent');
      assert.match(
        (e as Error).message,
        /Operation not permitted; run the controller as root or with CAP_NET_ADMIN/,
      );
      return true;
    });
  });

  it('maps an unreachable gateway to permanent and other failures to retryable with stderr', async () => {
    setRules([{ match: 'replace', stderr: 'Error: Nexthop has invalid gateway.\n', code: 2 }]);
    await assert.rejects((await provider()).createRoute('k', 'uid', ROUTE, opts()), (e: unknown) => {
      return errorKind(e) === 'permanent' && /Nexthop has invalid gateway/.test((e as Error).message);
    });
    setRules([{ match: 'show', stderr: 'Error: something odd\n', code: 1 }]);
    await assert.rejects((await provider()).listRoutes('k', opts()), (e: unknown) => {
      return errorKind(e) === 'retryable' && /something odd/.test((e as Error).message);
    });
  });

  it('maps a missing ip binary to permanent', async () => {
    const p = await linuxProviderFactory('ipCommand: /nonexistent/ip\n', nodes);
    await assert.rejects(p.routes()!.listRoutes('k', opts()), (e: unknown) => {
      return errorKind(e) === 'permanent' && /install iproute2 or set ipCommand/.test((e as Error).message);
    });
  });

  it('kills a running ip and rejects promptly with AbortError', async () => {
    setRules([{ match: 'show', sleepMs: 10_000 }]);
    const ac = new AbortController();
    const pending = (await provider()).listRoutes('k', opts(ac.signal));
    setTimeout(() => ac.abort(new Error('shutdown')), 200);
    await assert.rejects(pending, { name: 'AbortError' });
    // The fake logs a call only when it finishes (after 10 s): no entry means it was killed,
    // and the rejection did not wait for it. No wall-clock bound needed.
    assert.deepEqual(calls(), []);
  });

  it('runs at most maxConcurrent ip processes at once', async () => {
    setRules([{ match: '.', sleepMs: 150 }]);
    const run = createIpRunner(fakeIp, 2);
    const signal = new AbortController().signal;
    await Promise.all(Array.from({ length: 6 }, (_, i) => run(['call', String(i)], signal)));
    const spans = calls();
    assert.equal(spans.length, 6);
    // Peak concurrency is reached at some call's start.
    for (const s of spans) {
      const running = spans.filter((o) => o.started <= s.started && s.started < o.ended).length;
      assert.ok(running <= 2, `${running} ran together`);
    }
  });

  it('lets a call waiting for a slot leave on abort', async () => {
    setRules([{ match: '.', sleepMs: 500 }]);
    const run = createIpRunner(fakeIp, 1);
    const busy = run(['first'], new AbortController().signal);
    const ac = new AbortController();
    const waiting = run(['second'], ac.signal);
    ac.abort();
    await assert.rejects(waiting, { name: 'AbortError' });
    await busy;
    assert.deepEqual(
      calls().map((c) => c.line),
      ['first'],
    );
  });
});
