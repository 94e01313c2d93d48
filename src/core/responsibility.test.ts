// SPEC §9.4 TestIsResponsibleForRoute (12 rows).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseCIDR } from './cidr.ts';
import { isResponsibleForRoute } from './responsibility.ts';

const rows: [string, string, string, boolean][] = [
  ['TM1', '10.244.0.0/16', '10.244.0.0/24', true],
  ['TM2', '10.244.0.0/16', '10.244.10.0/24', true],
  ['TM3', '10.244.0.0/16', '10.244.255.0/24', true],
  ['TM4', '10.244.0.0/14', '10.244.0.0/24', true],
  ['TM5', '10.244.0.0/14', '10.247.255.0/24', true],
  ['TM6', 'a00:100::/10', 'a00:100::/24', true],
  ['TM7', '10.244.0.0/16', '10.224.0.0/24', false],
  ['TM8', '10.244.0.0/16', '10.0.10.0/24', false],
  ['TM9', '10.244.0.0/16', '10.255.255.0/24', false],
  ['TM10', '10.244.0.0/14', '10.248.0.0/24', false],
  ['TM11', '10.244.0.0/14', '10.243.255.0/24', false],
  ['TM12', 'a00:100::/10', 'b00:100::/24', false],
];

describe('TestIsResponsibleForRoute (SPEC §9.4)', () => {
  for (const [t, cluster, route, want] of rows) {
    it(`${t} ${route} in ${cluster} → ${want}`, () => {
      assert.equal(isResponsibleForRoute([parseCIDR(cluster)], parseCIDR(route)), want);
    });
  }
  it('R13: a route wider than the cluster CIDR whose last address is inside is managed', () => {
    // 10.0.0.0/8 ends at 10.255.255.255, inside 10.255.0.0/16.
    assert.equal(isResponsibleForRoute([parseCIDR('10.255.0.0/16')], parseCIDR('10.0.0.0/8')), true);
  });
  it('R13: families never mix', () => {
    assert.equal(isResponsibleForRoute([parseCIDR('10.0.0.0/8')], parseCIDR('::a00:0/104')), false);
  });
});
