// Shapes of the Hetzner Cloud API objects the plug-in reads, with parsers
// that check only the fields it uses: the API adds fields over time, and an
// unchecked cast would turn a changed response into a wrong route decision.

export interface ApiRoute {
  readonly destination: string;
  readonly gateway: string;
}

export interface ApiNetwork {
  readonly id: number;
  readonly name: string;
  readonly ipRange: string;
  readonly routes: readonly ApiRoute[];
  /** IDs of the servers attached to the network. */
  readonly servers: readonly number[];
}

export interface ApiPrivateNet {
  readonly network: number;
  readonly ip: string;
}

export interface ApiServer {
  readonly id: number;
  readonly name: string;
  readonly privateNet: readonly ApiPrivateNet[];
}

export interface ApiAction {
  readonly id: number;
  readonly command: string;
  /** 'running' | 'success' | 'error' per the docs; kept open for forward compatibility. */
  readonly status: string;
  readonly error: { readonly code: string; readonly message: string } | null;
}

export interface ApiServerPage {
  readonly servers: readonly ApiServer[];
  readonly nextPage: number | null;
}

export class ResponseShapeError extends Error {
  override readonly name: string = 'ResponseShapeError';
}

type Obj = Record<string, unknown>;

function obj(v: unknown, what: string): Obj {
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new ResponseShapeError(`${what} is not an object`);
  return v as Obj;
}

function num(o: Obj, key: string, what: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isFinite(v))
    throw new ResponseShapeError(`${what}.${key} is not a number`);
  return v;
}

function str(o: Obj, key: string, what: string): string {
  const v = o[key];
  if (typeof v !== 'string') throw new ResponseShapeError(`${what}.${key} is not a string`);
  return v;
}

function arr(o: Obj, key: string, what: string): unknown[] {
  const v = o[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new ResponseShapeError(`${what}.${key} is not a list`);
  return v;
}

function toNetwork(v: unknown): ApiNetwork {
  const n = obj(v, 'network');
  return {
    id: num(n, 'id', 'network'),
    name: str(n, 'name', 'network'),
    ipRange: typeof n['ip_range'] === 'string' ? n['ip_range'] : '',
    routes: arr(n, 'routes', 'network').map((r) => {
      const o = obj(r, 'network.routes[]');
      return { destination: str(o, 'destination', 'route'), gateway: str(o, 'gateway', 'route') };
    }),
    servers: arr(n, 'servers', 'network').filter((s): s is number => typeof s === 'number'),
  };
}

function toServer(v: unknown): ApiServer {
  const s = obj(v, 'server');
  return {
    id: num(s, 'id', 'server'),
    name: str(s, 'name', 'server'),
    privateNet: arr(s, 'private_net', 'server').map((p) => {
      const o = obj(p, 'server.private_net[]');
      return { network: num(o, 'network', 'private_net'), ip: str(o, 'ip', 'private_net') };
    }),
  };
}

export function parseNetwork(body: unknown): ApiNetwork {
  return toNetwork(obj(body, 'response')['network']);
}

export function parseNetworkList(body: unknown): ApiNetwork[] {
  return arr(obj(body, 'response'), 'networks', 'response').map(toNetwork);
}

export function parseServer(body: unknown): ApiServer {
  return toServer(obj(body, 'response')['server']);
}

export function parseServerList(body: unknown): ApiServerPage {
  const o = obj(body, 'response');
  const servers = arr(o, 'servers', 'response').map(toServer);
  const meta = o['meta'];
  let nextPage: number | null = null;
  if (typeof meta === 'object' && meta !== null) {
    const p = (meta as Obj)['pagination'];
    if (typeof p === 'object' && p !== null) {
      const next = (p as Obj)['next_page'];
      if (typeof next === 'number' && Number.isSafeInteger(next)) nextPage = next;
    }
  }
  return { servers, nextPage };
}

export function parseAction(body: unknown): ApiAction {
  const a = obj(obj(body, 'response')['action'], 'action');
  const e = a['error'];
  let error: ApiAction['error'] = null;
  if (typeof e === 'object' && e !== null) {
    const eo = e as Obj;
    error = {
      code: typeof eo['code'] === 'string' ? eo['code'] : 'unknown_error',
      message: typeof eo['message'] === 'string' ? eo['message'] : '',
    };
  }
  return {
    id: num(a, 'id', 'action'),
    command: typeof a['command'] === 'string' ? a['command'] : '',
    status: str(a, 'status', 'action'),
    error,
  };
}
