import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_PROTOCOL, LinuxConfigError, parseLinuxConfig } from './config.ts';

function rejects(text: string, pattern: RegExp): void {
  assert.throws(
    () => parseLinuxConfig(text),
    (err: unknown) => err instanceof LinuxConfigError && pattern.test(err.message),
  );
}

describe('parseLinuxConfig', () => {
  it('defaults to table main, protocol 200, own namespace, ip from PATH', () => {
    for (const text of ['', '  \n', '{}', 'null', '# only a comment\n']) {
      assert.deepEqual(parseLinuxConfig(text), {
        table: 'main',
        protocol: DEFAULT_PROTOCOL,
        netns: undefined,
        ipCommand: 'ip',
      });
    }
    assert.equal(DEFAULT_PROTOCOL, 200);
  });

  it('reads YAML', () => {
    const c = parseLinuxConfig('table: k8s\nprotocol: 201\nnetns: router\nipCommand: /usr/sbin/ip\n');
    assert.deepEqual(c, { table: 'k8s', protocol: 201, netns: 'router', ipCommand: '/usr/sbin/ip' });
  });

  it('reads JSON and numeric tables', () => {
    assert.equal(parseLinuxConfig('{"table": 100}').table, '100');
    assert.equal(parseLinuxConfig('{"table": "0100"}').table, '100');
    assert.equal(parseLinuxConfig('{"table": "main", "protocol": 5}').protocol, 5);
    assert.equal(parseLinuxConfig('table: 4294967295').table, '4294967295');
  });

  it('names the field of a bad protocol', () => {
    rejects('protocol: 0', /field "protocol".*reserved by the kernel/);
    rejects('protocol: 2', /field "protocol" must not be 2/);
    rejects('protocol: 4', /field "protocol" must not be 4/);
    rejects('protocol: 256', /field "protocol" must be an integer 5\.\.255, got 256/);
    rejects('protocol: 1.5', /field "protocol" must be an integer/);
    rejects('protocol: "200"', /field "protocol" must be an integer 5\.\.255, got "200"/);
  });

  it('names the field of a bad table', () => {
    rejects('table: 0', /field "table"/);
    rejects('table: local', /field "table" must not be "local"/);
    rejects('table: 255', /field "table" must not be "255"/);
    rejects('table: all', /field "table" must not be "all"/);
    rejects('table: "-x"', /field "table" must be a table name/);
    rejects('table: "a b"', /field "table"/);
    rejects('table: 4294967296', /field "table"/);
    rejects('table: [1]', /field "table" must be a string or a number/);
  });

  it('names the field of a bad netns or ipCommand', () => {
    rejects('netns: ""', /field "netns" must be non-empty/);
    rejects('netns: "-all"', /field "netns".*not start with '-'/);
    rejects('netns: 5', /field "netns" must be a string, got number/);
    rejects('ipCommand: "ip -b"', /field "ipCommand".*without whitespace/);
  });

  it('rejects unknown fields, naming them', () => {
    rejects('protcol: 200', /field "protcol" is unknown; known fields: table, protocol, netns, ipCommand/);
  });

  it('rejects text that is not a mapping', () => {
    rejects('- a\n- b', /must be a mapping.*got a list/);
    rejects('42', /must be a mapping.*got number/);
    rejects('{table: [', /not valid YAML or JSON/);
  });
});
