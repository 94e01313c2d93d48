import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
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

  test('property: any list, cut at any bytes, scans to what JSON.parse reads', () => {
    // Strings full of the characters the skipping path must not be fooled by.
    const text = fc.string({
      unit: fc.constantFrom('"', '\\', '{', '}', '[', ']', ',', ':', 'a', 'é', '🚀'),
      maxLength: 12,
    });
    const { value } = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        text,
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(text, tie('value'), { maxKeys: 4 }),
      ),
    }));
    fc.assert(
      fc.property(
        fc.array(value, { maxLength: 6 }),
        fc.dictionary(text, value, { maxKeys: 3 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 8 }),
        (items, meta, pretty, cuts) => {
          const list = { metadata: meta, items };
          const bytes = Buffer.from(pretty ? JSON.stringify(list, null, 1) : JSON.stringify(list), 'utf8');
          const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
          const seen: unknown[] = [];
          const s = new ListScanner((i) => seen.push(i));
          let from = 0;
          for (const c of [...at, bytes.length]) {
            s.write(bytes.subarray(from, c));
            from = c;
          }
          const parsed = JSON.parse(bytes.toString('utf8')) as typeof list;
          assert.deepEqual(seen, parsed.items);
          assert.deepEqual(s.end(), { metadata: parsed.metadata });
        },
      ),
      { numRuns: 500, ...(process.env['FC_SEED'] ? { seed: Number(process.env['FC_SEED']) } : {}) },
    );
  });

  test('an item that is not valid JSON surfaces JSON.parse’s error', () => {
    assert.throws(() => scanList('{"items":[{"a":tru}]}', () => {}), SyntaxError);
  });
});
