// A stand-in for the EC2 instance metadata service (IMDSv2 only: a GET without the token from
// PUT /latest/api/token is refused with 401, as an instance with HttpTokens=required does).
// Serves the identity document's region and the instance ID; counts requests by path.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ImdsStandIn {
  /** For AWS_EC2_METADATA_SERVICE_ENDPOINT. */
  readonly endpoint: string;
  /** Requests by `METHOD path`. */
  readonly hits: Map<string, number>;
  close(): Promise<void>;
}

export async function startImdsStandIn(opts: { region: string; instanceId: string }): Promise<ImdsStandIn> {
  const token = `stand-in-token-${process.pid}`;
  const hits = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const key = `${req.method} ${req.url}`;
    hits.set(key, (hits.get(key) ?? 0) + 1);
    if (req.method === 'PUT' && req.url === '/latest/api/token') {
      if (!req.headers['x-aws-ec2-metadata-token-ttl-seconds']) {
        res.writeHead(400).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end(token);
      return;
    }
    if (req.method !== 'GET') {
      res.writeHead(405).end();
      return;
    }
    if (req.headers['x-aws-ec2-metadata-token'] !== token) {
      res.writeHead(401).end();
      return;
    }
    if (req.url === '/latest/dynamic/instance-identity/document') {
      const doc = { region: opts.region, instanceId: opts.instanceId, availabilityZone: `${opts.region}a` };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
    } else if (req.url === '/latest/meta-data/instance-id') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end(opts.instanceId);
    } else {
      res.writeHead(404).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
