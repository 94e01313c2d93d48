import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { transformNode } from './node-cache.ts';
import { ProtoListScanner } from './proto-list-scanner.ts';
import { ProtoError } from './proto-reader.ts';
import { encodeNodeList, envelope, types } from './testing/k8s-proto.ts';

const FC = process.env['FC_SEED'] ? { seed: Number(process.env['FC_SEED']) } : {};

/** What Go's encoding/json writes for a metav1.Time of `seconds` (RFC 3339, seconds, UTC). */
function rfc3339(seconds: number): string {
  return `${new Date(seconds * 1000).toISOString().slice(0, 19)}Z`;
}

/** A node in the proto schema's shape, and the same node as the apiserver's JSON shows it. */
interface Pair {
  readonly proto: Record<string, unknown>;
  readonly json: Record<string, unknown>;
}

const text = fc.string({ unit: 'grapheme', maxLength: 12 });
const maybeEmpty = fc.oneof(fc.constant(''), text);
// Within metav1.Time's JSON range (years 1970–9999 here; zero time is omitted in both encodings).
const seconds = fc.option(fc.integer({ min: 0, max: 253402300799 }), { nil: undefined });

const condition = fc.record({
  type: fc.constantFrom('Ready', 'NetworkUnavailable', 'MemoryPressure', ''),
  status: fc.constantFrom('True', 'False', 'Unknown', ''),
  hb: seconds,
  tr: seconds,
  reason: maybeEmpty,
  message: maybeEmpty,
});

const pair: fc.Arbitrary<Pair> = fc
  .record({
    name: maybeEmpty,
    uid: maybeEmpty,
    rv: maybeEmpty,
    created: seconds,
    podCIDR: maybeEmpty,
    podCIDRs: fc.array(text, { maxLength: 3 }),
    providerID: maybeEmpty,
    addresses: fc.array(fc.record({ type: maybeEmpty, address: maybeEmpty }), { maxLength: 3 }),
    conditions: fc.array(condition, { maxLength: 4 }),
    labels: fc.dictionary(text, text, { maxKeys: 3 }),
    managed: fc.array(fc.uint8Array({ maxLength: 400 }), { maxLength: 2 }),
  })
  .map((n) => {
    const time = (s: number | undefined): object | undefined =>
      s === undefined ? undefined : { seconds: s };
    // Go's protobuf writes every string, empty or not, and omits zero times.
    const proto = {
      metadata: {
        name: n.name,
        uid: n.uid,
        resourceVersion: n.rv,
        creationTimestamp: time(n.created),
        labels: n.labels,
        managedFields: n.managed.map((raw) => ({ manager: 'kubelet', fieldsV1: { Raw: raw } })),
      },
      spec: { podCIDR: n.podCIDR, podCIDRs: n.podCIDRs, providerID: n.providerID, taints: [] },
      status: {
        capacity: { cpu: { string: '4' } },
        conditions: n.conditions.map((c) => ({
          type: c.type,
          status: c.status,
          lastHeartbeatTime: time(c.hb),
          lastTransitionTime: time(c.tr),
          reason: c.reason,
          message: c.message,
        })),
        addresses: n.addresses,
        images: [{ names: ['registry/image:tag'], sizeBytes: 1234 }],
        nodeInfo: { machineID: 'm', kubeletVersion: 'v1.36.3' },
      },
    };
    // Go's JSON: `omitempty` strings and empty lists left out, zero times null.
    const some = (o: Record<string, unknown>): Record<string, unknown> =>
      Object.fromEntries(Object.entries(o).filter(([, v]) => v !== '' && v !== undefined && v !== null));
    const json = {
      metadata: some({
        name: n.name,
        uid: n.uid,
        resourceVersion: n.rv,
        creationTimestamp: n.created === undefined ? null : rfc3339(n.created),
        labels: n.labels,
      }),
      spec: some({
        podCIDR: n.podCIDR,
        podCIDRs: n.podCIDRs.length > 0 ? n.podCIDRs : undefined,
        providerID: n.providerID,
      }),
      status: some({
        addresses: n.addresses.length > 0 ? n.addresses : undefined,
        conditions:
          n.conditions.length > 0
            ? n.conditions.map((c) => ({
                type: c.type,
                status: c.status,
                lastHeartbeatTime: c.hb === undefined ? null : rfc3339(c.hb),
                lastTransitionTime: c.tr === undefined ? null : rfc3339(c.tr),
                ...some({ reason: c.reason, message: c.message }),
              }))
            : undefined,
      }),
    };
    return { proto, json };
  });

/** Feeds `bytes` cut at `cuts` (offsets, any order) and returns the items and the rest. */
function scan(bytes: Buffer, cuts: number[]): { items: unknown[]; rest: Record<string, unknown> } {
  const items: unknown[] = [];
  const s = new ProtoListScanner((i) => items.push(i));
  let from = 0;
  for (const c of [...new Set(cuts.map((x) => x % (bytes.length + 1)))].sort((a, b) => a - b)) {
    s.write(bytes.subarray(from, c));
    from = c;
  }
  s.write(bytes.subarray(from));
  return { items, rest: s.end() };
}

describe('ProtoListScanner (R110)', () => {
  test('property: every node reads as transformNode reads its JSON', () => {
    fc.assert(
      fc.property(fc.array(pair, { maxLength: 6 }), maybeEmpty, maybeEmpty, (pairs, rv, cont) => {
        const bytes = encodeNodeList(
          pairs.map((p) => p.proto),
          { resourceVersion: rv, continue: cont, remainingItemCount: 3 },
        );
        const { items, rest } = scan(bytes, []);
        assert.deepEqual(
          items.map((i) => transformNode(i)),
          pairs.map((p) => transformNode(p.json)),
        );
        const md: Record<string, string> = {};
        if (rv !== '') md['resourceVersion'] = rv;
        if (cont !== '') md['continue'] = cont;
        assert.deepEqual(rest, { kind: 'NodeList', metadata: md });
      }),
      { numRuns: 300, ...FC },
    );
  });

  test('property: chunk boundaries do not matter', () => {
    fc.assert(
      fc.property(
        fc.array(pair, { minLength: 1, maxLength: 4 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        (pairs, cuts) => {
          const bytes = encodeNodeList(
            pairs.map((p) => p.proto),
            { resourceVersion: '42' },
          );
          const whole = scan(bytes, []);
          const cut = scan(bytes, cuts);
          assert.deepEqual(cut, whole);
          assert.equal(cut.items.length, pairs.length);
        },
      ),
      { numRuns: 300, ...FC },
    );
  });

  test('property: a list cut short anywhere is an error, never a shorter list', () => {
    fc.assert(
      fc.property(fc.array(pair, { minLength: 1, maxLength: 3 }), fc.nat(), (pairs, at) => {
        const bytes = encodeNodeList(
          pairs.map((p) => p.proto),
          { resourceVersion: '42' },
        );
        // The last four bytes are the empty contentEncoding and contentType after the list.
        const keep = at % (bytes.length - 4);
        const s = new ProtoListScanner(() => {});
        assert.throws(() => {
          s.write(bytes.subarray(0, keep));
          s.end();
        }, ProtoError);
      }),
      { numRuns: 300, ...FC },
    );
  });

  test('byte by byte', () => {
    const bytes = encodeNodeList(
      [{ metadata: { name: 'a', resourceVersion: '1' }, spec: { podCIDRs: ['10.0.0.0/24'] }, status: {} }],
      { resourceVersion: '9' },
    );
    const { items, rest } = scan(
      bytes,
      Array.from({ length: bytes.length }, (_, i) => i),
    );
    assert.deepEqual(items, [
      { metadata: { name: 'a', resourceVersion: '1' }, spec: { podCIDRs: ['10.0.0.0/24'] }, status: {} },
    ]);
    assert.deepEqual(rest, { kind: 'NodeList', metadata: { resourceVersion: '9' } });
  });

  test("property: every second of metav1.Time's range renders as its JSON does", () => {
    fc.assert(
      fc.property(fc.integer({ min: -62135596799, max: 253402300799 }), (seconds) => {
        const { items } = scan(
          encodeNodeList([{ metadata: { name: 'a', creationTimestamp: { seconds } } }], {}),
          [],
        );
        const [n] = items as { metadata: Obj }[];
        assert.equal(n!.metadata['creationTimestamp'], rfc3339(seconds));
      }),
      { numRuns: 5000, ...FC },
    );
    assert.throws(
      () =>
        scan(
          encodeNodeList([{ metadata: { name: 'a', creationTimestamp: { seconds: 253402300800 } } }], {}),
          [],
        ),
      /time out of range/,
    );
  });

  test('times: RFC 3339 in seconds, nanoseconds dropped, the zero time absent', () => {
    const node = {
      metadata: { name: 'a', creationTimestamp: { seconds: 1796614359, nanos: 999 } },
      status: { conditions: [{ type: 'NetworkUnavailable', status: 'False', lastHeartbeatTime: {} }] },
    };
    const { items } = scan(encodeNodeList([node], { resourceVersion: '1' }), []);
    const [n] = items as { metadata: Obj; status: { conditions: Obj[] } }[];
    assert.equal(n!.metadata['creationTimestamp'], '2026-12-07T03:32:39Z');
    assert.deepEqual(n!.status.conditions, [{ type: 'NetworkUnavailable', status: 'False' }]);
  });

  test('not a Kubernetes protobuf answer, or not a NodeList: a clear error', () => {
    const list =
      (b: Buffer): (() => void) =>
      () => {
        const s = new ProtoListScanner(() => assert.fail('no item expected'));
        s.write(b);
        s.end();
      };
    assert.throws(list(Buffer.from('{"kind":"NodeList","items":[]}')), /no "k8s\\0" prefix/);
    const status = envelope('Status', types.Status.encode(types.Status.fromObject({ code: 500 })).finish());
    assert.throws(list(status), /expected a NodeList, got Status/);
    assert.throws(list(Buffer.from('k8s\0', 'latin1')), /without a list/);
    // An item whose length runs past the list.
    const bad = Buffer.from([0x6b, 0x38, 0x73, 0x00, 0x12, 0x03, 0x12, 0x09, 0x0a]);
    assert.throws(list(bad), /9 bytes, 1 left/);
  });
});

type Obj = Record<string, unknown>;
