// An admin watch on Nodes that timestamps, per node, the first sight of its pod CIDRs, of
// Ready=True and of NetworkUnavailable=False. Hand-written over node:https rather than an
// informer from @kubernetes/client-node: the timestamp must be taken when the watch line
// arrives, before any cache or handler queue, and the bench's other admin traffic goes the
// same way (bench/lib/apiserver.ts).
import * as https from 'node:https';
import { kubeconfigIdentity } from '../../test/support/controlplane.ts';

export interface NodeTimes {
  podCIDRAt?: number;
  podCIDRs?: string[];
  readyAt?: number;
  schedulableAt?: number;
  unavailable?: boolean;
}

export interface WatchedNode {
  metadata?: { name?: string; resourceVersion?: string };
  spec?: { podCIDRs?: string[] };
  status?: { conditions?: { type?: string; status?: string }[] };
}

/** An admin watch on Nodes that timestamps, per node, the first sight of each state. */
export class NodeTimeline {
  readonly nodes = new Map<string, NodeTimes>();
  schedulable = 0;
  private rv = '';
  private req: ReturnType<typeof https.request> | undefined;
  private stopped = false;
  private readonly id: ReturnType<typeof kubeconfigIdentity>;
  private readonly agent: https.Agent;

  constructor(kubeconfig: string) {
    this.id = kubeconfigIdentity(kubeconfig);
    this.agent = new https.Agent({ keepAlive: true, ca: this.id.ca, cert: this.id.cert, key: this.id.key });
  }

  private see(o: WatchedNode, at: number): void {
    const name = o.metadata?.name;
    if (name === undefined) return;
    let t = this.nodes.get(name);
    if (t === undefined) this.nodes.set(name, (t = {}));
    const cidrs = o.spec?.podCIDRs ?? [];
    if (t.podCIDRAt === undefined && cidrs.length > 0) {
      t.podCIDRAt = at;
      t.podCIDRs = cidrs;
    }
    for (const c of o.status?.conditions ?? []) {
      if (c.type === 'Ready' && c.status === 'True' && t.readyAt === undefined) t.readyAt = at;
      if (c.type === 'NetworkUnavailable' && c.status === 'True') t.unavailable = true;
      if (c.type === 'NetworkUnavailable' && c.status === 'False' && t.schedulableAt === undefined) {
        t.schedulableAt = at;
        this.schedulable++;
      }
    }
  }

  private get(urlPath: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const u = new URL(this.id.server);
      https
        .get(
          {
            host: u.hostname,
            port: u.port,
            path: urlPath,
            agent: this.agent,
            headers: { Accept: 'application/json' },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () =>
              res.statusCode === 200
                ? resolve(Buffer.concat(chunks).toString('utf8'))
                : reject(new Error(`GET ${urlPath}: HTTP ${res.statusCode}`)),
            );
            res.on('error', reject);
          },
        )
        .on('error', reject);
    });
  }

  /** Lists (everything seen now), then watches from the list's resourceVersion. */
  async start(): Promise<void> {
    const at = Date.now();
    const list = JSON.parse(await this.get('/api/v1/nodes')) as {
      items: WatchedNode[];
      metadata: { resourceVersion: string };
    };
    for (const o of list.items) this.see(o, at);
    this.rv = list.metadata.resourceVersion;
    this.watch();
  }

  private watch(): void {
    if (this.stopped) return;
    const u = new URL(this.id.server);
    const req = https.get(
      {
        host: u.hostname,
        port: u.port,
        path: `/api/v1/nodes?watch=1&allowWatchBookmarks=true&resourceVersion=${this.rv}&timeoutSeconds=3600`,
        agent: this.agent,
        headers: { Accept: 'application/json' },
      },
      (res) => {
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const at = Date.now();
          buf += chunk;
          for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
            const line = buf.slice(0, nl);
            buf = buf.slice(nl + 1);
            if (line.trim() === '') continue;
            const ev = JSON.parse(line) as { type: string; object: WatchedNode & { code?: number } };
            if (ev.type === 'ERROR') {
              // 410 Gone: start over with a list (times of what changed meanwhile come late).
              this.rv = '';
              continue;
            }
            if (ev.object.metadata?.resourceVersion) this.rv = ev.object.metadata.resourceVersion;
            if (ev.type === 'ADDED' || ev.type === 'MODIFIED') this.see(ev.object, at);
          }
        });
        res.on('end', () => this.reconnect());
        res.on('error', () => this.reconnect());
      },
    );
    req.on('error', () => this.reconnect());
    this.req = req;
  }

  private reconnect(): void {
    if (this.stopped) return;
    setTimeout(() => {
      if (this.rv === '') void this.start().catch(() => this.reconnect());
      else this.watch();
    }, 200);
  }

  stop(): void {
    this.stopped = true;
    this.req?.destroy();
    this.agent.destroy();
  }
}
