import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseNodeJson } from './node-json.ts';
import { transformNode } from './node-cache.ts';

describe('parseNodeJson', () => {
  it('parses like JSON.parse (structurally equal; objects of another realm)', () => {
    const text = JSON.stringify({
      type: 'MODIFIED',
      object: {
        metadata: { name: 'n1', uid: 'u', resourceVersion: '7' },
        spec: { podCIDRs: ['10.244.1.0/24'] },
      },
    });
    const parsed = parseNodeJson(text) as { object: unknown };
    assert.equal(JSON.stringify(parsed), text);
    assert.equal(Array.isArray((parsed.object as { spec: { podCIDRs: unknown } }).spec.podCIDRs), true);
    // Another realm's objects: what is kept is rebuilt in this one (R58).
    assert.notEqual(Object.getPrototypeOf(parsed), Object.prototype);
    const n = transformNode(parsed.object);
    assert.equal(Object.getPrototypeOf(n), Object.prototype);
    assert.deepEqual(n, {
      metadata: { name: 'n1', uid: 'u', resourceVersion: '7', creationTimestamp: undefined },
      spec: { podCIDRs: ['10.244.1.0/24'] },
    });
  });

  it("bad input throws this realm's SyntaxError with the parser's message", () => {
    assert.throws(
      () => parseNodeJson('{"type":"MODIFIED","object":{'),
      (err: unknown) => err instanceof SyntaxError && /JSON/.test(err.message),
    );
  });
});
