// An EC2Client whose HTTP exchanges are answered in-process: a middleware
// placed just inside the SDK's deserializer returns synthesized EC2 query
// responses, so the real deserializer builds the errors and outputs. For what
// moto cannot emulate: throttling, blackholes, quotas.
import { EC2Client } from '../../src/cloud/aws/ec2.ts';

export interface StubRequest {
  /** EC2 action, e.g. `CreateRoute`. */
  action: string;
  params: URLSearchParams;
}

export interface StubReply {
  status?: number;
  headers?: Record<string, string>;
  body: string;
}

export type StubHandler = (req: StubRequest) => StubReply | Promise<StubReply>;

const NS = 'http://ec2.amazonaws.com/doc/2016-11-15/';

export function ec2Ok(action: string, inner = '<return>true</return>'): StubReply {
  return {
    body: `<?xml version="1.0" encoding="UTF-8"?>\n<${action}Response xmlns="${NS}"><requestId>req-ok</requestId>${inner}</${action}Response>`,
  };
}

export function ec2Error(
  code: string,
  message: string,
  status = 400,
  headers: Record<string, string> = {},
): StubReply {
  return {
    status,
    headers,
    body: `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Errors><Error><Code>${code}</Code><Message>${message}</Message></Error></Errors><RequestID>req-err</RequestID></Response>`,
  };
}

export interface StubRoute {
  cidr: string;
  instanceId?: string;
  gatewayId?: string;
  natGatewayId?: string;
  state?: 'active' | 'blackhole';
}

export function ec2RouteTables(tables: { id: string; vpcId?: string; routes: StubRoute[] }[]): StubReply {
  const items = tables.map((t) => {
    const routes = t.routes
      .map((r) => {
        const dest = r.cidr.includes(':')
          ? `<destinationIpv6CidrBlock>${r.cidr}</destinationIpv6CidrBlock>`
          : `<destinationCidrBlock>${r.cidr}</destinationCidrBlock>`;
        const target =
          (r.instanceId ? `<instanceId>${r.instanceId}</instanceId>` : '') +
          (r.gatewayId ? `<gatewayId>${r.gatewayId}</gatewayId>` : '') +
          (r.natGatewayId ? `<natGatewayId>${r.natGatewayId}</natGatewayId>` : '');
        return `<item>${dest}${target}<state>${r.state ?? 'active'}</state><origin>CreateRoute</origin></item>`;
      })
      .join('');
    return `<item><routeTableId>${t.id}</routeTableId><vpcId>${t.vpcId ?? 'vpc-0000000000000000a'}</vpcId><routeSet>${routes}</routeSet><tagSet/></item>`;
  });
  return ec2Ok('DescribeRouteTables', `<routeTableSet>${items.join('')}</routeTableSet>`);
}

export function stubEc2(handler: StubHandler): { client: EC2Client; requests: StubRequest[] } {
  const requests: StubRequest[] = [];
  const client = new EC2Client({
    region: 'us-east-1',
    // Never contacted: the middleware answers before the HTTP handler runs.
    endpoint: 'http://127.0.0.1:9',
    credentials: { accessKeyId: 'AKIAUNITTESTEXAMPLE0', secretAccessKey: 'unit-test-secret' },
    maxAttempts: 1,
  });
  client.middlewareStack.add(
    (_next) => async (args) => {
      const request = args.request as { body?: unknown };
      const params = new URLSearchParams(typeof request.body === 'string' ? request.body : '');
      const req: StubRequest = { action: params.get('Action') ?? '', params };
      requests.push(req);
      const reply = await handler(req);
      return {
        response: {
          statusCode: reply.status ?? 200,
          reason: '',
          headers: { 'content-type': 'text/xml;charset=UTF-8', ...reply.headers },
          body: Buffer.from(reply.body),
        },
        output: undefined as never,
      };
    },
    { step: 'deserialize', priority: 'low', name: 'ec2StubResponder' },
  );
  return { client, requests };
}
