// Shared set-up for the hcloud plug-in tests: the API fake with one network
// and a few servers, and nodes that map to them by providerID.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { HcloudFake } from '../../../../test/support/hcloud-fake.ts';
import type { HcloudFakeOptions } from '../../../../test/support/hcloud-fake.ts';
import { errorKind } from '../../../core/errors.ts';
import type { CallOptions, Node, NodeLister, Route } from '../../../core/types.ts';
import { HcloudClient, HcloudRoutes } from '../index.ts';

export const NET = 7;

export function lister(nodes: Node[]): NodeLister {
  return {
    get: (name) => nodes.find((n) => n.metadata?.name === name),
    list: () => nodes,
  };
}

export function node(name: string, providerID?: string): Node {
  return { metadata: { name }, spec: providerID === undefined ? {} : { providerID } };
}

export const NODES = lister([
  node('node-1', 'hcloud://101'),
  node('node-2', 'hcloud://102'),
  node('node-4', 'hcloud://104'),
  node('node-5', 'hcloud://999'),
  node('node-x'),
  node('robot-1', 'hrobot://55'),
]);

export function callOpts(signal?: AbortSignal, scratch = new Map<string, unknown>()): CallOptions {
  return { signal: signal ?? new AbortController().signal, reconcile: { id: 'r1', scratch } };
}

export function route(targetNode: string, destinationCIDR: string): Route {
  return {
    name: '',
    targetNode,
    targetNodeAddresses: [],
    enableNodeAddresses: false,
    destinationCIDR,
    blackhole: false,
  };
}

export interface Env {
  fake: HcloudFake;
  client: HcloudClient;
  routes: HcloudRoutes;
}

export async function setup(
  t: TestContext,
  opts: HcloudFakeOptions = {},
  network: number | string = NET,
): Promise<Env> {
  const fake = await HcloudFake.start(opts);
  t.after(() => fake.close());
  fake.addNetwork({ id: NET, name: 'k8s', ipRange: '10.0.0.0/16' });
  fake.addServer({ id: 101, name: 'node-1', privateNet: [{ network: NET, ip: '10.0.1.1' }] });
  fake.addServer({ id: 102, name: 'node-2', privateNet: [{ network: NET, ip: '10.0.2.1' }] });
  fake.addServer({ id: 103, name: 'orphan', privateNet: [{ network: NET, ip: '10.0.3.1' }] });
  fake.addServer({ id: 104, name: 'node-4' });
  const client = new HcloudClient({ endpoint: fake.endpoint, token: fake.token, pollIntervalMs: 5 });
  return { fake, client, routes: new HcloudRoutes({ client, network, nodes: NODES }) };
}

export async function until(pred: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 2000;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

export function rejectsWithKind(p: Promise<unknown>, kind: string, re?: RegExp): Promise<void> {
  return assert.rejects(p, (err: unknown) => {
    assert.equal((err as Error).name === 'AbortError' ? 'abort' : errorKind(err), kind, String(err));
    if (re) assert.match((err as Error).message, re);
    return true;
  });
}

export const paths = (fake: HcloudFake, method: string): string[] =>
  fake.requests.filter((r) => r.method === method).map((r) => r.path);
