// The Azure fake (testenv/azure-fake: Microsoft's generated armnetwork fake
// servers over HTTP on loopback) for integration tests: one process per test
// file, logging to a temp file, with its control endpoints as methods.
import { startGoFake } from './go-fake.ts';
import { prerequisite } from './prerequisites.ts';

// AZURE_FAKE, else the binary scripts/azure-fake.sh
// built for the current sources; its tests skip without it, and fail with CI=true.
const AZURE_FAKE = prerequisite(
  'AZURE_FAKE',
  'azure-fake.sh',
  'azure fake not built: run scripts/azure-fake.sh build (or set AZURE_FAKE)',
);
export const azureFakePath = AZURE_FAKE.path;
export const azureFakeSkip = AZURE_FAKE.skip;

/** A route as Microsoft.Network stores it (the fake's JSON). */
export interface FakeRoute {
  name: string;
  etag?: string;
  properties: {
    addressPrefix: string;
    nextHopType: string;
    nextHopIpAddress?: string;
    provisioningState?: string;
  };
}

/** Another writer's route (a default route to a firewall appliance), for FakeFault.foreignRoute. */
export const FIREWALL_ROUTE: FakeRoute = {
  name: 'to_firewall',
  properties: { addressPrefix: '0.0.0.0/0', nextHopType: 'VirtualAppliance', nextHopIpAddress: '10.0.0.250' },
};

export interface FakeTable {
  name: string;
  location: string;
  etag: string;
  properties: { routes?: FakeRoute[]; provisioningState?: string };
}

export interface FakeRequest {
  seq: number;
  method: string;
  path: string;
  api: string;
  status: number;
  ifMatch?: string;
  token?: string;
}

export interface FakeFault {
  method?: 'GET' | 'PUT' | 'DELETE';
  table?: string;
  times?: number;
  status?: number;
  code?: string;
  message?: string;
  retryAfter?: string;
  /** Written into the table by "another writer" just before the faulted request. */
  foreignRoute?: FakeRoute;
  /** The request's long-running operation ends Failed with this code. */
  lroError?: string;
}

export interface AzureFake {
  readonly endpoint: string;
  reset(): Promise<void>;
  /** Non-terminal responses of each LRO (the number of polls it takes). */
  setLROPolls(n: number): Promise<void>;
  /** Routes a table may hold (testenv/azure-fake/limit.go); 0: Azure's 1,000. */
  setMaxRoutes(n: number): Promise<void>;
  inject(...faults: FakeFault[]): Promise<void>;
  pendingFaults(): Promise<number>;
  tables(): Promise<FakeTable[]>;
  table(name: string): Promise<FakeTable | undefined>;
  requests(): Promise<FakeRequest[]>;
  /** Seeds a table through the ARM API itself (a PUT, polled to completion). */
  putTable(subscription: string, resourceGroup: string, name: string, body: object): Promise<void>;
  stop(): Promise<void>;
}

export async function startAzureFake(): Promise<AzureFake> {
  const bin = azureFakePath();
  if (bin === undefined) throw new Error('azure fake not built: run scripts/azure-fake.sh build');
  const { endpoint, control, stop } = await startGoFake('azure-fake', bin);

  const tables = async (): Promise<FakeTable[]> =>
    Object.values((await control('GET', 'state')) as Record<string, FakeTable>);

  return {
    endpoint,
    reset: async () => void (await control('POST', 'reset')),
    setLROPolls: async (n) => void (await control('POST', 'config', { lroPolls: n })),
    setMaxRoutes: async (n) => void (await control('POST', 'config', { maxRoutes: n })),
    inject: async (...faults) => void (await control('POST', 'faults', faults)),
    pendingFaults: async () => ((await control('GET', 'faults')) as { pending: number }).pending,
    tables,
    table: async (name) => (await tables()).find((t) => t.name.toLowerCase() === name.toLowerCase()),
    requests: async () => (await control('GET', 'requests')) as FakeRequest[],
    async putTable(subscription, resourceGroup, name, body) {
      const url = `${endpoint}/subscriptions/${subscription}/resourceGroups/${resourceGroup}/providers/Microsoft.Network/routeTables/${name}?api-version=2026-01-01`;
      const headers = { authorization: 'Bearer seed', 'content-type': 'application/json' };
      let res = await fetch(url, { method: 'PUT', headers, body: JSON.stringify(body) });
      let op = res.headers.get('azure-asyncoperation');
      if (!res.ok) throw new Error(`seed PUT ${name}: ${res.status} ${await res.text()}`);
      await res.body?.cancel();
      while (op !== null) {
        res = await fetch(op, { headers });
        const status = ((await res.json()) as { status: string }).status;
        if (status !== 'InProgress') op = null;
      }
    },
    stop,
  };
}
