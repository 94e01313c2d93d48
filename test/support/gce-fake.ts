// The GCE fake (testenv/gce-fake: Google's MockGCE from k8s-cloud-provider
// served as the Compute Engine v1 REST API on loopback) for integration tests:
// one process per test file, logging to a temp file, with its control
// endpoints as methods.
import { startGoFake } from './go-fake.ts';
import { prerequisite } from './prerequisites.ts';

// GCE_FAKE, else the binary scripts/gce-fake.sh
// built for the current sources; its tests skip without it, and fail with CI=true.
const GCE_FAKE = prerequisite(
  'GCE_FAKE',
  'gce-fake.sh',
  'gce fake not built: run scripts/gce-fake.sh build (or set GCE_FAKE)',
);
export const gceFakePath = GCE_FAKE.path;
export const gceFakeSkip = GCE_FAKE.skip;

/** A route as the Compute Engine API returns it. */
export interface FakeRoute {
  name: string;
  destRange: string;
  network?: string;
  nextHopInstance?: string;
  nextHopIp?: string;
  priority?: number;
  description?: string;
  warnings?: { code: string; message: string }[];
}

export interface FakeRequest {
  seq: number;
  method: string;
  path: string;
  api: string;
  status: number;
  filter?: string;
  pageToken?: string;
  token?: string;
  issuer?: string;
  /** Why the token endpoint refused a key-file assertion. */
  refused?: string;
}

export interface FakeFault {
  method?: 'GET' | 'POST' | 'DELETE';
  /** routes.insert, routes.delete, routes.list, routes.get, instances.get, globalOperations.wait, alt.token */
  api?: string;
  /** The route or instance the request names. */
  name?: string;
  times?: number;
  status?: number;
  reason?: string;
  message?: string;
  retryAfter?: string;
  /** The write is accepted and its operation ends DONE with this error. */
  opError?: { code: string; message: string; httpStatus?: number };
}

export interface Instance {
  project: string;
  zone: string;
  name: string;
}

export interface GceFake {
  readonly endpoint: string;
  /** The api-endpoint for gce.conf. */
  readonly api: string;
  reset(): Promise<void>;
  /**
   * RUNNING answers before DONE; each wait consumes at most waitSteps of them (0: all); page size;
   * requireIssuedTokens: Compute calls need a bearer the fake issued (401 otherwise).
   */
  configure(c: {
    opPolls?: number;
    waitSteps?: number;
    pageSize?: number;
    routesQuota?: number;
    requireIssuedTokens?: boolean;
  }): Promise<void>;
  /** Service accounts whose key-file assertions /token accepts, by the PEM of the key's public half. */
  addServiceAccounts(...accounts: { email: string; publicKey: string }[]): Promise<void>;
  inject(...faults: FakeFault[]): Promise<void>;
  pendingFaults(): Promise<number>;
  clearFaults(): Promise<void>;
  addInstances(...instances: Instance[]): Promise<void>;
  deleteInstances(...instances: Instance[]): Promise<void>;
  routes(): Promise<FakeRoute[]>;
  requests(): Promise<FakeRequest[]>;
  /** Inserts a route through the API itself (as another writer would). */
  insertRoute(project: string, route: FakeRoute): Promise<void>;
  stop(): Promise<void>;
}

export async function startGceFake(): Promise<GceFake> {
  const bin = gceFakePath();
  if (bin === undefined) throw new Error('gce fake not built: run scripts/gce-fake.sh build');
  const { endpoint, control, stop } = await startGoFake('gce-fake', bin);

  return {
    endpoint,
    api: `${endpoint}/compute/v1/`,
    reset: async () => void (await control('POST', 'reset')),
    configure: async (c) => void (await control('POST', 'config', c)),
    inject: async (...faults) => void (await control('POST', 'faults', faults)),
    clearFaults: async () => void (await control('DELETE', 'faults')),
    pendingFaults: async () => ((await control('GET', 'faults')) as { pending: number }).pending,
    addServiceAccounts: async (...accounts) => void (await control('POST', 'service-accounts', accounts)),
    addInstances: async (...instances) => void (await control('POST', 'instances', instances)),
    deleteInstances: async (...instances) => void (await control('DELETE', 'instances', instances)),
    routes: async () => ((await control('GET', 'state')) as { routes: FakeRoute[] }).routes,
    requests: async () => (await control('GET', 'requests')) as FakeRequest[],
    async insertRoute(project, route) {
      const res = await fetch(`${endpoint}/compute/v1/projects/${project}/global/routes`, {
        method: 'POST',
        headers: { authorization: 'Bearer seed', 'content-type': 'application/json' },
        body: JSON.stringify(route),
      });
      if (!res.ok) throw new Error(`seed route ${route.name}: ${res.status} ${await res.text()}`);
      await res.body?.cancel();
    },
    stop,
  };
}
