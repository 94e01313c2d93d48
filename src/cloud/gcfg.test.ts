import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GcfgSyntaxError, parseGcfg } from './gcfg.ts';

describe('parseGcfg', () => {
  test('sections, case-insensitive names, quotes, escapes, comments and continuations', () => {
    const sections = parseGcfg(
      [
        '; cloud.conf',
        '[Global]',
        'Auth-URL = https://keystone.example:5000/v3  # trailing comment',
        'password = "p;a#s \\"w\\" "   ; quoted keeps ; # and spaces',
        'username=  admin user  ',
        'use-clouds',
        'region = Reg\\',
        'ionOne',
        '[LoadBalancerClass "internal"]',
        'subnet-id = abc',
        '[Route]',
        'router-id = 2d4e',
      ].join('\n'),
    );
    assert.deepEqual(
      sections.map((s) => [s.name, s.subsection, s.entries.map((e) => [e.name, e.value])]),
      [
        [
          'global',
          undefined,
          [
            ['auth-url', 'https://keystone.example:5000/v3'],
            ['password', 'p;a#s "w" '],
            ['username', 'admin user'],
            ['use-clouds', 'true'],
            ['region', 'RegionOne'],
          ],
        ],
        ['loadbalancerclass', 'internal', [['subnet-id', 'abc']]],
        ['route', undefined, [['router-id', '2d4e']]],
      ],
    );
  });

  test('CRLF line ends and a byte-order mark read like plain text', () => {
    const [s] = parseGcfg('\uFEFF[Route]\r\nrouter-id = r1\r\n');
    assert.deepEqual(
      s?.entries.map((e) => e.value),
      ['r1'],
    );
  });

  for (const [text, message] of [
    ['router-id = x', /line 1: variable outside a section/],
    ['[Route', /line 1: invalid section header/],
    ['[Route]\nrouter id = x', /line 2: invalid variable name "router id"/],
    ['[Global]\npassword = "open', /line 2: unterminated quote/],
    ['[Global]\npassword = a\\qb', /line 2: invalid escape "\\q"/],
  ] as const) {
    test(`rejects ${JSON.stringify(text)} with the line number`, () => {
      assert.throws(
        () => parseGcfg(text),
        (err: unknown) => {
          assert.ok(err instanceof GcfgSyntaxError);
          assert.match(err.message, message);
          return true;
        },
      );
    });
  }
});
