import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { canonicalCIDR, formatIP, hasHostBits, parseCIDR, parseIP } from './cidr.ts';
import { formatDuration, parseDuration } from './duration.ts';

describe('CIDR parsing (SPEC §1 canonical CIDR)', () => {
  it('clears host bits and prints /len', () => {
    assert.equal(canonicalCIDR('10.120.1.7/24'), '10.120.1.0/24');
    assert.equal(canonicalCIDR('ace:cab:deca::/8'), 'a00::/8');
  });
  it('reads IPv4 leading zeros as decimal, as Kubernetes does', () => {
    assert.equal(canonicalCIDR('010.120.001.000/24'), '10.120.1.0/24');
  });
  it('formats IPv6 per RFC 5952', () => {
    assert.equal(canonicalCIDR('2001:0DB8:0000:0000:0000:0000:0000:0000/32'), '2001:db8::/32');
    assert.equal(canonicalCIDR('2001:db8:0:0:1:0:0:1/128'), '2001:db8::1:0:0:1/128');
    assert.equal(canonicalCIDR('2001:db8:0:1:1:1:1:1/128'), '2001:db8:0:1:1:1:1:1/128');
    assert.equal(canonicalCIDR('::/0'), '::/0');
    assert.equal(canonicalCIDR('::ffff:10.1.2.3/128'), '::ffff:a01:203/128');
  });
  it('rejects bad input with a clear error', () => {
    for (const bad of [
      '10.0.0.0',
      '10.0.0.0/33',
      '10.0.0.256/24',
      'a00::/129',
      'foo/8',
      '10.0.0.0/-1',
      '',
      '1:2:3/64',
    ]) {
      assert.throws(() => parseCIDR(bad), /invalid CIDR address/, bad);
    }
  });
  it('detects host bits', () => {
    assert.equal(hasHostBits('10.0.0.1/8'), true);
    assert.equal(hasHostBits('10.0.0.0/8'), false);
  });
  it('property: canonical form is a fixed point and IPv6 text round-trips', () => {
    fc.assert(
      fc.property(fc.ipV6(), fc.integer({ min: 0, max: 128 }), (addr, len) => {
        const c = canonicalCIDR(`${addr}/${len}`);
        assert.ok(c);
        assert.equal(canonicalCIDR(c), c);
        const p = parseIP(addr)!;
        assert.deepEqual(parseIP(formatIP(6, p.ip)), p);
      }),
    );
    fc.assert(
      fc.property(fc.ipV4(), fc.integer({ min: 0, max: 32 }), (addr, len) => {
        const c = canonicalCIDR(`${addr}/${len}`)!;
        assert.equal(canonicalCIDR(c), c);
      }),
    );
  });
});

describe('Go durations', () => {
  it('parses and formats like Go', () => {
    assert.equal(parseDuration('1h30m'), 5_400_000);
    assert.equal(parseDuration('500ms'), 500);
    assert.equal(parseDuration('0'), 0);
    assert.throws(() => parseDuration('10'), /invalid duration/);
    assert.throws(() => parseDuration('1x'), /invalid duration/);
    assert.equal(formatDuration(1500), '1.5s');
    assert.equal(formatDuration(100), '100ms');
    assert.equal(formatDuration(3_723_000), '1h2m3s');
    assert.equal(formatDuration(0), '0s');
  });
});
