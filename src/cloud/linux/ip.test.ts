import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { errorKind } from '../../core/errors.ts';
import { parseLinuxConfig } from './config.ts';
import {
  IpExecError,
  canonicalIp,
  cidrFamily,
  classifyIpError,
  deleteArgs,
  isEmptyListing,
  isMissingRoute,
  listArgs,
  parseRouteJson,
  replaceArgs,
} from './ip.ts';

const cfg = parseLinuxConfig('');
const nsCfg = parseLinuxConfig('table: 100\nprotocol: 201\nnetns: r1\n');

// Captured from iproute2 6.1 (`ip -4 -json route show table main proto 200`).
const V4 =
  '[{"dst":"10.244.1.0/24","gateway":"172.30.9.2","dev":"v1","flags":[]},' +
  '{"type":"blackhole","dst":"10.244.3.0/24","flags":[]},' +
  '{"type":"unreachable","dst":"10.244.4.0/24","flags":[]},' +
  '{"dst":"10.244.5.0/24","dev":"v1","scope":"link","flags":[]},' +
  '{"dst":"10.244.6.0/24","flags":[],"nexthops":[{"gateway":"172.30.9.2","dev":"v1","weight":1,"flags":[]},' +
  '{"gateway":"172.30.9.3","dev":"v1","weight":1,"flags":[]}]},' +
  '{"dst":"10.244.7.5","gateway":"172.30.9.2","dev":"v1","flags":[]},' +
  '{"dst":"default","gateway":"172.30.9.1","dev":"v1","protocol":"200","metric":50,"flags":[]}]\n';
const V6 =
  '[{"dst":"fd00:244:0:1::/64","gateway":"fd00:30:9::2","dev":"v1","metric":1024,"flags":[],"pref":"medium"},' +
  '{"type":"blackhole","dst":"fd00:244:0:2::/64","dev":"lo","metric":1024,"flags":[],"pref":"medium"},' +
  '{"dst":"fd00:244:0:8::5","gateway":"fd00:30:9::2","dev":"v1","metric":1024,"flags":[]}]';

describe('argument vectors', () => {
  it('lists one family, one table, one protocol', () => {
    assert.deepEqual(listArgs(cfg, 4), ['-4', '-json', 'route', 'show', 'table', 'main', 'proto', '200']);
    assert.deepEqual(listArgs(nsCfg, 6, { exact: 'fd00::/64' }), [
      ...['-n', 'r1', '-6', '-json', 'route', 'show', 'table', '100', 'proto', '201', 'exact', 'fd00::/64'],
    ]);
    assert.deepEqual(listArgs(cfg, 4, { exact: '10.0.0.0/24', anyProtocol: true }), [
      ...['-4', '-json', 'route', 'show', 'table', 'main', 'exact', '10.0.0.0/24'],
    ]);
  });

  it('replaces with via, table and protocol', () => {
    assert.deepEqual(replaceArgs(nsCfg, 4, '10.244.1.0/24', '172.30.1.2'), [
      ...['-n', 'r1', '-4', 'route', 'replace', '10.244.1.0/24', 'via', '172.30.1.2'],
      ...['table', '100', 'proto', '201'],
    ]);
  });

  it('deletes with protocol, and via only when known', () => {
    assert.deepEqual(deleteArgs(cfg, 6, 'fd00::/64', 'fd00:30::2'), [
      ...['-6', 'route', 'del', 'fd00::/64', 'via', 'fd00:30::2', 'table', 'main', 'proto', '200'],
    ]);
    assert.deepEqual(deleteArgs(cfg, 4, '10.0.0.0/24'), [
      ...['-4', 'route', 'del', '10.0.0.0/24', 'table', 'main', 'proto', '200'],
    ]);
  });
});

describe('parseRouteJson', () => {
  it('reads gateways, types, multipath, dev routes, host and default routes', () => {
    const r = parseRouteJson(V4, 4);
    assert.deepEqual(
      r.map((x) => [x.dst, x.type, x.gateways]),
      [
        ['10.244.1.0/24', 'unicast', ['172.30.9.2']],
        ['10.244.3.0/24', 'blackhole', []],
        ['10.244.4.0/24', 'unreachable', []],
        ['10.244.5.0/24', 'unicast', []],
        ['10.244.6.0/24', 'unicast', ['172.30.9.2', '172.30.9.3']],
        ['10.244.7.5/32', 'unicast', ['172.30.9.2']],
        ['0.0.0.0/0', 'unicast', ['172.30.9.1']],
      ],
    );
    assert.equal(r[6]?.protocol, '200');
    assert.equal(r[6]?.metric, 50);
    assert.equal(r[0]?.protocol, undefined);
  });

  it('reads IPv6', () => {
    const r = parseRouteJson(V6, 6);
    assert.deepEqual(
      r.map((x) => [x.dst, x.type, x.gateways, x.metric]),
      [
        ['fd00:244:0:1::/64', 'unicast', ['fd00:30:9::2'], 1024],
        ['fd00:244:0:2::/64', 'blackhole', [], 1024],
        ['fd00:244:0:8::5/128', 'unicast', ['fd00:30:9::2'], 1024],
      ],
    );
    assert.deepEqual(
      parseRouteJson('[{"dst":"default","gateway":"fe80::1","dev":"v1"}]', 6).map((x) => x.dst),
      ['::/0'],
    );
  });

  it('takes empty output and [] as no routes', () => {
    assert.deepEqual(parseRouteJson('', 4), []);
    assert.deepEqual(parseRouteJson('[]\n', 6), []);
  });

  it('rejects output that is not ip -json as retryable', () => {
    for (const bad of ['[', '{}', '[{"gateway":"1.2.3.4"}]', '[1]']) {
      assert.throws(
        () => parseRouteJson(bad, 4),
        (e: unknown) => errorKind(e) === 'retryable' && /cannot parse/.test((e as Error).message),
      );
    }
  });
});

describe('addresses', () => {
  it('canonicalises IPv6 as ip prints it and IPv4 leading zeros as decimal', () => {
    assert.equal(canonicalIp('FD00:0030:0001:0000:0000:0000:0000:0002'), 'fd00:30:1::2');
    assert.equal(canonicalIp('fd00:30:1::2'), 'fd00:30:1::2');
    assert.equal(canonicalIp('010.001.2.3'), '10.1.2.3');
    assert.equal(canonicalIp('256.1.1.1'), undefined);
    assert.equal(canonicalIp('node-1'), undefined);
  });

  it('tells the family of a CIDR', () => {
    assert.equal(cidrFamily('10.244.0.0/16'), 4);
    assert.equal(cidrFamily('fd00:244::/48'), 6);
    assert.equal(cidrFamily('10.244.0.0/33'), undefined);
    assert.equal(cidrFamily('fd00::/129'), undefined);
    assert.equal(cidrFamily('10.244.0.0/x'), undefined);
    assert.equal(cidrFamily('nonsense/8'), undefined);
  });
});

function ipFailure(stderr: string, code: number | string = 2): IpExecError {
  return new IpExecError(['-4', 'route', 'replace', '10.244.1.0/24', 'via', '10.0.0.9'], code, stderr);
}

describe('classifyIpError', () => {
  it('maps unfixable requests to permanent', () => {
    for (const stderr of [
      'Error: Nexthop has invalid gateway.\n',
      'RTNETLINK answers: Network is unreachable\n',
      'RTNETLINK answers: No route to host\n',
      'Error: Invalid prefix for given prefix length.\n',
      'Error: argument "nosuch" is wrong: "table" value is invalid\n\n',
    ]) {
      const e = classifyIpError(ipFailure(stderr), 'create route');
      assert.equal(errorKind(e), 'permanent', stderr);
      assert.match(e.message, /^create route: ip -4 route replace 10\.244\.1\.0\/24 via 10\.0\.0\.9: /);
      assert.ok(e.message.includes(stderr.split('\n')[0] ?? ''), e.message);
    }
  });

  it('maps EPERM to permanent with a CAP_NET_ADMIN hint', () => {
    const e = classifyIpError(ipFailure('RTNETLINK answers: Operation not permitted\n'), 'create route');
    assert.equal(errorKind(e), 'permanent');
    assert.match(e.message, /Operation not permitted; run the controller as root or with CAP_NET_ADMIN/);
  });

  it('maps a missing ip binary to permanent', () => {
    const e = classifyIpError(ipFailure('', 'ENOENT'), 'list routes');
    assert.equal(errorKind(e), 'permanent');
    assert.match(e.message, /install iproute2 or set ipCommand/);
  });

  it('maps anything else to retryable carrying stderr', () => {
    const e = classifyIpError(ipFailure('RTNETLINK answers: Device or resource busy\n'), 'create route');
    assert.equal(errorKind(e), 'retryable');
    assert.match(e.message, /Device or resource busy/);
    const netns = classifyIpError(
      ipFailure('Cannot open network namespace "r9": No such file or directory\n', 255),
      'list',
    );
    assert.equal(errorKind(netns), 'retryable');
    assert.match(netns.message, /Cannot open network namespace "r9"/);
    assert.equal(errorKind(classifyIpError(ipFailure('', 1), 'x')), 'retryable');
    assert.match(classifyIpError(ipFailure('', 1), 'x').message, /exit status 1/);
    assert.equal(errorKind(classifyIpError(new Error('boom'), 'x')), 'retryable');
  });

  it('recognises a missing route and a missing table', () => {
    assert.ok(isMissingRoute(ipFailure('RTNETLINK answers: No such process\n')));
    assert.ok(isMissingRoute(ipFailure('Error: FIB table does not exist.\n')));
    assert.ok(!isMissingRoute(ipFailure('RTNETLINK answers: Operation not permitted\n')));
    assert.ok(isEmptyListing(ipFailure('Error: ipv6: FIB table does not exist.\nDump terminated\n')));
    assert.ok(!isEmptyListing(ipFailure('RTNETLINK answers: No such process\n')));
    assert.ok(!isMissingRoute(new Error('No such process')));
  });
});
