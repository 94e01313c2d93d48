import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ListScanError, ListScanner, scanList } from './list-scanner.ts';

const tricky = {
  kind: 'NodeList',
  apiVersion: 'v1',
  metadata: { resourceVersion: '123', continue: 'eyJ2IjoibWV0YS5rOHMuaW8vdjEifQ' },
  items: [
    { metadata: { name: 'a', annotations: { x: 'has "quotes", {braces} and [brackets]\\', y: '\\"' } } },
    { metadata: { name: 'ünïcödé-ノード-🚀' }, n: -1.5e3, t: true, f: false, z: null, e: [], o: {} },
    'a string item',
    42,
    [1, [2, [3]]],
  ],
  trailing: 7,
};

function scanChunks(text: string, size: number): { items: unknown[]; rest: Record<string, unknown> } {
  const bytes = Buffer.from(text, 'utf8');
  const items: unknown[] = [];
  const s = new ListScanner((i) => items.push(i));
  for (let o = 0; o < bytes.length; o += size) s.write(bytes.subarray(o, o + size));
  return { items, rest: s.end() };
}

describe('ListScanner', () => {
  test('yields every item and the other top-level fields, at any chunk boundary', () => {
    for (const text of [JSON.stringify(tricky), JSON.stringify(tricky, null, 2)]) {
      for (const size of [1, 2, 3, 5, 7, 64, 1 << 20]) {
        const { items, rest } = scanChunks(text, size);
        assert.deepEqual(items, tricky.items, `chunk size ${size}`);
        assert.deepEqual(rest, {
          kind: 'NodeList',
          apiVersion: 'v1',
          metadata: tricky.metadata,
          trailing: 7,
        });
      }
    }
  });

  test('empty lists and lists without items', () => {
    assert.deepEqual(
      scanList('{}', () => assert.fail()),
      {},
    );
    assert.deepEqual(
      scanList(' { "items" : [ ] , "metadata":{"resourceVersion":"1"} } ', () => assert.fail()),
      {
        metadata: { resourceVersion: '1' },
      },
    );
    assert.deepEqual(
      scanList('{"items":null}', () => assert.fail()),
      { items: null },
    );
  });

  test('malformed or truncated input is an error', () => {
    const text = JSON.stringify(tricky);
    for (const cut of [1, 10, 60, text.length - 1]) {
      assert.throws(() => scanList(text.slice(0, cut), () => {}), ListScanError, `cut at ${cut}`);
    }
    for (const bad of [
      '[]',
      '{"a" 1}',
      '{"a":1 "b":2}',
      '{"items":[1 2]}',
      '{"items":[,]}',
      '{} x',
      '{"a":}',
    ]) {
      assert.throws(
        () => scanList(bad, () => {}),
        (e: unknown) => e instanceof ListScanError || e instanceof SyntaxError,
        bad,
      );
    }
  });

  test('an item that is not valid JSON surfaces JSON.parse’s error', () => {
    assert.throws(() => scanList('{"items":[{"a":tru}]}', () => {}), SyntaxError);
  });
});
