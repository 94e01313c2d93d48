import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { errorKind } from '../../core/errors.ts';
import type { CallOptions, Node, NodeLister, Route } from '../../core/types.ts';
import { parseLinuxConfig } from './config.ts';
import type { IpRunner } from './exec.ts';
import { IpExecError } from './ip.ts';
import { LinuxRoutes, linuxProviderFactory } from './index.ts';

function node(name: string, ...addresses: [string, string][]): Node {
  return {
    metadata: { name, uid: `uid-${name}` },
    status: { addresses: addresses.map(([type, address]) => ({ type, address })) },
  };
}

function lister(nodes: Node[]): NodeLister {
  return {
    get: (name) => nodes.find((n) => n.metadata?.name === name),
    list: () => nodes,
  };
}

const NODES = lister([
  node('n1', ['InternalIP', '172.30.1.2'], ['InternalIP', 'fd00:30:1::2'], ['Hostname', 'n1']),
  node('n2', ['InternalIP', '172.30.2.2'], ['ExternalIP', '203.0.113.2']),
  node('n3', ['InternalIP', 'FD00:30:3:0::2']),
]);

function opts(signal: AbortSignal = new AbortController().signal): CallOptions {
  return { signal, reconcile: { id: 'r1', scratch: new Map() } };
}

type Reply = string | IpExecError;

/** A runner that records argument vectors and answers by the first matching rule. */
function fakeRunner(rules: [RegExp, Reply][] = []): { run: IpRunner; calls: string[] } {
  const calls: string[] = [];
  const run: IpRunner = async (args) => {
    const line = args.join(' ');
    calls.push(line);
    const hit = rules.find(([re]) => re.test(line));
    const reply = hit ? hit[1] : line.includes(' show ') ? '[]' : '';
    if (reply instanceof IpExecError) throw reply;
    return reply;
  };
  return { run, calls };
}

function fail(stderr: string): IpExecError {
  return new IpExecError(['route'], 2, stderr);
}

function route(dst: string, targetNode: string, addrs: [string, string][] = []): Route {
  return {
    name: '',
    targetNode,
    targetNodeAddresses: addrs.map(([type, address]) => ({ type, address })),
    enableNodeAddresses: false,
    destinationCIDR: dst,
    blackhole: false,
  };
}

const cfg = parseLinuxConfig('netns: r\n');

describe('LinuxRoutes.listRoutes', () => {
  it('maps next hops to nodes by InternalIP, both families', async () => {
    const { run, calls } = fakeRunner([
      [
        /-4 -json route show table main proto 200$/,
        '[{"dst":"10.244.1.0/24","gateway":"172.30.1.2","dev":"vn1","flags":[]},' +
          '{"dst":"10.244.2.0/24","gateway":"172.30.2.2","dev":"vn2","flags":[]},' +
          '{"dst":"10.244.9.0/24","gateway":"172.30.9.2","dev":"vn9","flags":[]},' +
          '{"type":"blackhole","dst":"10.244.4.0/24","flags":[]},' +
          '{"type":"unreachable","dst":"10.244.5.0/24","flags":[]},' +
          '{"dst":"10.244.6.0/24","dev":"vn1","scope":"link","flags":[]}]',
      ],
      [
        /-6 -json route show table main proto 200$/,
        '[{"dst":"fd00:244:0:1::/64","gateway":"fd00:30:1::2","dev":"vn1","metric":1024,"flags":[]},' +
          '{"dst":"fd00:244:0:3::/64","gateway":"fd00:30:3::2","dev":"vn3","metric":1024,"flags":[]}]',
      ],
    ]);
    const routes = await new LinuxRoutes(cfg, NODES, run).listRoutes('k', opts());
    assert.deepEqual(calls.sort(), [
      '-n r -4 -json route show table main proto 200',
      '-n r -6 -json route show table main proto 200',
    ]);
    const brief = routes.map((r) => [r.destinationCIDR, r.targetNode, r.blackhole, r.targetNodeAddresses]);
    assert.deepEqual(brief, [
      ['10.244.1.0/24', 'n1', false, [{ type: 'InternalIP', address: '172.30.1.2' }]],
      ['10.244.2.0/24', 'n2', false, [{ type: 'InternalIP', address: '172.30.2.2' }]],
      ['10.244.9.0/24', '', true, [{ type: 'InternalIP', address: '172.30.9.2' }]],
      ['10.244.4.0/24', '', true, []],
      ['10.244.5.0/24', '', true, []],
      ['10.244.6.0/24', '', true, []],
      ['fd00:244:0:1::/64', 'n1', false, [{ type: 'InternalIP', address: 'fd00:30:1::2' }]],
      ['fd00:244:0:3::/64', 'n3', false, [{ type: 'InternalIP', address: 'fd00:30:3::2' }]],
    ]);
    assert.ok(routes.every((r) => r.enableNodeAddresses === false));
    assert.equal(routes[0]?.name, '10.244.1.0/24 via 172.30.1.2');
    assert.equal(routes[3]?.name, 'blackhole 10.244.4.0/24');
  });

  it('reports multipath as one node only when every next hop is that node', async () => {
    const nh = (a: string, b: string): string =>
      `{"gateway":"${a}","dev":"x","weight":1,"flags":[]},{"gateway":"${b}","dev":"y","weight":1,"flags":[]}`;
    const { run } = fakeRunner([
      [
        /-4 -json/,
        `[{"dst":"10.244.1.0/24","flags":[],"nexthops":[${nh('172.30.1.2', '172.30.2.2')}]},` +
          `{"dst":"10.244.2.0/24","flags":[],"nexthops":[${nh('172.30.8.2', '172.30.9.2')}]}]`,
      ],
      [/-6 -json/, `[{"dst":"fd00:244::/64","flags":[],"nexthops":[${nh('fd00:30:1::2', 'fd00:30:1::2')}]}]`],
    ]);
    const routes = await new LinuxRoutes(cfg, NODES, run).listRoutes('k', opts());
    assert.deepEqual(
      routes.map((r) => [r.destinationCIDR, r.targetNode, r.blackhole]),
      [
        ['10.244.1.0/24', '', false],
        ['10.244.2.0/24', '', true],
        ['fd00:244::/64', 'n1', false],
      ],
    );
  });

  it('treats a table that does not exist yet as empty', async () => {
    const { run } = fakeRunner([[/show/, fail('Error: FIB table does not exist.\nDump terminated\n')]]);
    assert.deepEqual(await new LinuxRoutes(cfg, NODES, run).listRoutes('k', opts()), []);
  });

  it('maps list failures to typed errors', async () => {
    const { run } = fakeRunner([[/-6 -json/, fail('RTNETLINK answers: Operation not permitted\n')]]);
    await assert.rejects(new LinuxRoutes(cfg, NODES, run).listRoutes('k', opts()), (e: unknown) => {
      assert.equal(errorKind(e), 'permanent');
      assert.match((e as Error).message, /CAP_NET_ADMIN/);
      return true;
    });
  });

  it('rejects with AbortError when already aborted, running nothing', async () => {
    const { run, calls } = fakeRunner();
    await assert.rejects(new LinuxRoutes(cfg, NODES, run).listRoutes('k', opts(AbortSignal.abort())), {
      name: 'AbortError',
    });
    assert.deepEqual(calls, []);
  });
});

describe('LinuxRoutes.createRoute', () => {
  it('replaces via the InternalIP of the route family from targetNodeAddresses', async () => {
    const { run, calls } = fakeRunner();
    const r = new LinuxRoutes(cfg, NODES, run);
    const addrs: [string, string][] = [
      ['ExternalIP', '203.0.113.7'],
      ['InternalIP', '10.0.0.7'],
      ['InternalIP', 'fd00::7'],
    ];
    await r.createRoute('k', 'uid', route('10.244.7.0/24', 'n7', addrs), opts());
    await r.createRoute('k', 'uid', route('fd00:244:7::/64', 'n7', addrs), opts());
    assert.deepEqual(
      calls.filter((c) => c.includes('replace')),
      [
        '-n r -4 route replace 10.244.7.0/24 via 10.0.0.7 table main proto 200',
        '-n r -6 route replace fd00:244:7::/64 via fd00::7 table main proto 200',
      ],
    );
    assert.ok(calls.includes('-n r -4 -json route show table main exact 10.244.7.0/24'));
    assert.ok(calls.includes('-n r -4 -json route show table main proto 200 exact 10.244.7.0/24'));
  });

  it('falls back to the node lister when the route carries no addresses', async () => {
    const { run, calls } = fakeRunner();
    await new LinuxRoutes(cfg, NODES, run).createRoute('k', 'uid', route('fd00:244:3::/64', 'n3'), opts());
    assert.equal(calls.at(-1), '-n r -6 route replace fd00:244:3::/64 via fd00:30:3::2 table main proto 200');
  });

  it('fails permanently without an InternalIP of the family', async () => {
    const { run, calls } = fakeRunner();
    const r = new LinuxRoutes(cfg, NODES, run);
    // n2 has an IPv6-less address list, with an ExternalIP that must not be used.
    await assert.rejects(r.createRoute('k', 'uid', route('fd00:244:2::/64', 'n2'), opts()), (e: unknown) => {
      assert.equal(errorKind(e), 'permanent');
      assert.match((e as Error).message, /node n2 has no IPv6 InternalIP address/);
      return true;
    });
    const ext: [string, string][] = [['ExternalIP', '203.0.113.9']];
    await assert.rejects(
      r.createRoute('k', 'uid', route('10.244.9.0/24', 'n9', ext), opts()),
      /IPv4 InternalIP/,
    );
    await assert.rejects(
      r.createRoute('k', 'uid', route('10.244.8.0/24', 'gone'), opts()),
      /not in the node cache/,
    );
    await assert.rejects(r.createRoute('k', 'uid', route('10.244.8.0', 'n1'), opts()), /not a valid CIDR/);
    assert.deepEqual(calls, []);
  });

  it('refuses to replace a route another tool put there', async () => {
    const { run, calls } = fakeRunner([
      [/proto 200 exact/, '[]'],
      [/exact/, '[{"dst":"10.244.1.0/24","gateway":"172.30.9.9","dev":"x","protocol":"static","flags":[]}]'],
    ]);
    await assert.rejects(
      new LinuxRoutes(cfg, NODES, run).createRoute('k', 'uid', route('10.244.1.0/24', 'n1'), opts()),
      (e: unknown) => {
        assert.equal(errorKind(e), 'permanent');
        assert.match((e as Error).message, /does not own .*10\.244\.1\.0\/24 via 172\.30\.9\.9 proto static/);
        return true;
      },
    );
    assert.ok(!calls.some((c) => c.includes('replace')));
  });

  it('replaces our own route to another node (R2)', async () => {
    const ours = '[{"dst":"10.244.1.0/24","gateway":"172.30.2.2","dev":"x","flags":[]}]';
    const { run, calls } = fakeRunner([[/exact/, ours]]);
    await new LinuxRoutes(cfg, NODES, run).createRoute('k', 'uid', route('10.244.1.0/24', 'n1'), opts());
    assert.equal(calls.at(-1), '-n r -4 route replace 10.244.1.0/24 via 172.30.1.2 table main proto 200');
  });

  it('maps ip failures', async () => {
    const { run } = fakeRunner([[/replace/, fail('Error: Nexthop has invalid gateway.\n')]]);
    await assert.rejects(
      new LinuxRoutes(cfg, NODES, run).createRoute('k', 'uid', route('10.244.1.0/24', 'n1'), opts()),
      (e: unknown) =>
        errorKind(e) === 'permanent' && /Nexthop has invalid gateway/.test((e as Error).message),
    );
    const busy = fakeRunner([[/replace/, fail('RTNETLINK answers: Device or resource busy\n')]]);
    await assert.rejects(
      new LinuxRoutes(cfg, NODES, busy.run).createRoute('k', 'uid', route('10.244.1.0/24', 'n1'), opts()),
      (e: unknown) => errorKind(e) === 'retryable' && /resource busy/.test((e as Error).message),
    );
  });

  it('starts no mutation once aborted, also when aborted during the check', async () => {
    const ac = new AbortController();
    const calls: string[] = [];
    const run: IpRunner = async (args) => {
      calls.push(args.join(' '));
      ac.abort();
      return '[]';
    };
    const r = new LinuxRoutes(cfg, NODES, run);
    await assert.rejects(r.createRoute('k', 'uid', route('10.244.1.0/24', 'n1'), opts(ac.signal)), {
      name: 'AbortError',
    });
    assert.ok(!calls.some((c) => c.includes('replace')));
    calls.length = 0;
    await assert.rejects(r.createRoute('k', 'uid', route('10.244.1.0/24', 'n1'), opts(ac.signal)), {
      name: 'AbortError',
    });
    assert.deepEqual(calls, []);
  });
});

describe('LinuxRoutes.deleteRoute', () => {
  it('deletes exactly the listed next hop, with protocol', async () => {
    const { run, calls } = fakeRunner();
    const r = new LinuxRoutes(cfg, NODES, run);
    await r.deleteRoute('k', route('10.244.1.0/24', 'n1', [['InternalIP', '172.30.1.2']]), opts());
    await r.deleteRoute('k', { ...route('10.244.4.0/24', ''), blackhole: true }, opts());
    assert.deepEqual(calls, [
      '-n r -4 route del 10.244.1.0/24 via 172.30.1.2 table main proto 200',
      '-n r -4 route del 10.244.4.0/24 table main proto 200',
    ]);
  });

  it('succeeds when the route or its table is gone (R3)', async () => {
    for (const stderr of ['RTNETLINK answers: No such process\n', 'Error: FIB table does not exist.\n']) {
      const { run } = fakeRunner([[/del/, fail(stderr)]]);
      await new LinuxRoutes(cfg, NODES, run).deleteRoute('k', route('fd00:244::/64', 'n1'), opts());
    }
  });

  it('maps other failures and honours abort', async () => {
    const { run, calls } = fakeRunner([[/del/, fail('RTNETLINK answers: Operation not permitted\n')]]);
    const r = new LinuxRoutes(cfg, NODES, run);
    await assert.rejects(r.deleteRoute('k', route('10.244.1.0/24', 'n1'), opts()), /CAP_NET_ADMIN/);
    calls.length = 0;
    await assert.rejects(r.deleteRoute('k', route('10.244.1.0/24', 'n1'), opts(AbortSignal.abort())), {
      name: 'AbortError',
    });
    assert.deepEqual(calls, []);
  });
});

describe('linuxProviderFactory', () => {
  it('builds a provider named linux from the config text', async () => {
    const p = await linuxProviderFactory('table: 100\nprotocol: 222\n', NODES);
    assert.equal(p.name, 'linux');
    const routes = p.routes();
    assert.ok(routes instanceof LinuxRoutes);
    assert.equal(routes.config.table, '100');
    assert.equal(routes.config.protocol, 222);
    assert.equal(p.routes(), routes);
  });

  it('throws the config error', () => {
    assert.throws(() => linuxProviderFactory('protocol: 3', NODES), /field "protocol"/);
  });
});
