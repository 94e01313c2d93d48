// NeutronClient's port lists across pages, against an in-memory FetchLike:
// every page read through the catalog's endpoint (whatever host the next link
// names), the filters kept, a link that repeats a page refused. The real
// neutron-server pages them in test/integration/openstack-pagination.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { errorKind } from '../../core/errors.ts';
import type { FetchLike, FetchResponse } from '../../platform/http-fetch.ts';
import type { Keystone, Token } from './keystone.ts';
import { NeutronClient, nextLink } from './neutron.ts';

const TOKEN: Token = {
  id: 'tok',
  networkUrl: 'https://network.example/v2.0',
  issuedAt: 0,
  expiresAt: Number.MAX_SAFE_INTEGER,
};
const keystone = { token: async () => TOKEN, invalidate: () => undefined } as unknown as Keystone;

function json(body: unknown): FetchResponse {
  const text = JSON.stringify(body);
  return {
    ok: true,
    status: 200,
    headers: { get: () => null },
    text: async () => text,
  } as unknown as FetchResponse;
}

/** Neutron's answer for `ports` in pages of `size`, links built from an internal host as Neutron does behind a proxy. */
function pagedPorts(ports: Record<string, unknown>[], size: number, urls: string[]): FetchLike {
  return async (url) => {
    urls.push(url);
    const u = new URL(url);
    const marker = u.searchParams.get('marker');
    const start = marker === null ? 0 : ports.findIndex((p) => p['id'] === marker) + 1;
    const page = ports.slice(start, start + size);
    const links =
      page.length === size
        ? [
            {
              rel: 'next',
              href: `http://10.0.0.5:9696/v2.0/ports${u.search.replace(/&?marker=[^&]*/, '')}&limit=${size}&marker=${page.at(-1)!['id']}`,
            },
          ]
        : [];
    return json({
      ports: page,
      ...(start > 0 ? { ports_links: [...links, { rel: 'previous', href: 'x' }] } : { ports_links: links }),
    });
  };
}

const port = (i: number): Record<string, unknown> => ({
  id: `p${i}`,
  network_id: `net-${i % 3}`,
  fixed_ips: [{ ip_address: `10.0.0.${i}` }],
  revision_number: 1,
});

describe('NeutronClient pagination', () => {
  test('nextLink: the rel=next href, nothing without one', () => {
    assert.equal(
      nextLink([
        { rel: 'previous', href: 'a' },
        { rel: 'next', href: 'b' },
      ]),
      'b',
    );
    assert.equal(nextLink([{ rel: 'previous', href: 'a' }]), undefined);
    assert.equal(nextLink(undefined), undefined);
    assert.equal(nextLink([{ rel: 'next', href: '' }]), undefined);
  });

  test('router networks: every page read, through the catalog endpoint, the filters kept', async () => {
    const urls: string[] = [];
    const ports = Array.from({ length: 7 }, (_, i) => port(i));
    const client = new NeutronClient(keystone, pagedPorts(ports, 3, urls));
    const nets = await client.routerNetworkIds('r1', new AbortController().signal);
    assert.deepEqual(nets.sort(), ['net-0', 'net-1', 'net-2']);
    assert.equal(urls.length, 3);
    assert.ok(
      urls.every((u) => u.startsWith('https://network.example/v2.0/ports?device_id=r1&fields=network_id')),
      urls.join('\n'),
    );
    assert.deepEqual(
      urls.map((u) => new URL(u).searchParams.get('marker')),
      [null, 'p2', 'p5'],
    );
  });

  test('a port on the last of several pages is found; a page count that is a multiple of the size ends on the empty page', async () => {
    const urls: string[] = [];
    const ports = Array.from({ length: 6 }, (_, i) => port(i));
    const client = new NeutronClient(keystone, pagedPorts(ports, 3, urls));
    const found = await client.portsByIp('10.0.0.5', ['net-2'], new AbortController().signal);
    assert.deepEqual(
      found.map((p) => p.id),
      ['p0', 'p1', 'p2', 'p3', 'p4', 'p5'],
    );
    assert.equal(urls.length, 3, 'two full pages, then the empty one without a next link');
    assert.ok(
      urls.every((u) => u.includes('fixed_ips=ip_address%3D10.0.0.5&network_id=net-2')),
      urls.join('\n'),
    );
  });

  test('a next link that repeats a page is a permanent error, not an endless loop', async () => {
    let calls = 0;
    const loop: FetchLike = async () => {
      calls++;
      return json({
        ports: [port(calls)],
        ports_links: [{ rel: 'next', href: 'http://n/v2.0/ports?marker=same' }],
      });
    };
    const client = new NeutronClient(keystone, loop);
    await assert.rejects(
      client.routerNetworkIds('r1', new AbortController().signal),
      (e: Error) => errorKind(e) === 'permanent' && /next link repeats a page/.test(e.message),
    );
    assert.equal(calls, 2);
  });
});
