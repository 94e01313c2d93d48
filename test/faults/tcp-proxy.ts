// A loopback TCP proxy (TLS passes through untouched) between a controller and
// the kube-apiserver, to make the network misbehave the way NATs, firewalls and
// partitions do, which stopping the apiserver cannot: connections that stay
// open but carry nothing.
import * as net from 'node:net';

export type ProxyMode =
  /** Forward everything. */
  | 'forward'
  /** New connections are accepted but nothing they send ever arrives, and nothing comes back (partition). */
  | 'blackhole';

interface Pair {
  readonly client: net.Socket;
  readonly upstream: net.Socket;
  /** Bytes are dropped in both directions; neither side sees a close. */
  silent: boolean;
}

export class TcpProxy {
  private server: net.Server | undefined;
  private readonly pairs = new Set<Pair>();
  private mode: ProxyMode = 'forward';
  private readonly target: { host: string; port: number };
  port = 0;
  /** Connections accepted so far (to show that clients reconnected). */
  accepted = 0;

  constructor(target: string) {
    const u = new URL(target);
    this.target = { host: u.hostname, port: Number(u.port) };
  }

  /** https://127.0.0.1:<port>: the URL to put in the controller's kubeconfig. */
  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const server = net.createServer((client) => this.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as net.AddressInfo).port;
  }

  private accept(client: net.Socket): void {
    this.accepted++;
    const upstream = net.connect(this.target);
    const pair: Pair = { client, upstream, silent: this.mode === 'blackhole' };
    this.pairs.add(pair);
    client.on('data', (d) => {
      if (!pair.silent) upstream.write(d);
    });
    upstream.on('data', (d) => {
      if (!pair.silent) client.write(d);
    });
    const drop = (): void => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', drop);
    // A silent pair hides the apiserver's close too: its FIN must not reach the client.
    upstream.on('close', () => {
      if (!pair.silent) drop();
    });
    client.on('error', () => {});
    upstream.on('error', () => {});
  }

  /** Established connections go silent (no data, no close); new ones follow `mode`. */
  silenceEstablished(): number {
    let n = 0;
    for (const p of this.pairs)
      if (!p.silent) {
        p.silent = true;
        n++;
      }
    return n;
  }

  /** 'blackhole': a partition from now on (established and new connections). 'forward': healed for new ones. */
  setMode(mode: ProxyMode): void {
    this.mode = mode;
    if (mode === 'blackhole') this.silenceEstablished();
  }

  /** Live connections that still forward. */
  get forwarding(): number {
    return [...this.pairs].filter((p) => !p.silent).length;
  }

  async stop(): Promise<void> {
    for (const p of this.pairs) {
      p.client.destroy();
      p.upstream.destroy();
    }
    this.pairs.clear();
    const s = this.server;
    this.server = undefined;
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}

/** A copy of a kubeconfig (JSON, as test/support writes them) with its server replaced. */
export function kubeconfigVia(text: string, server: string): string {
  const cfg = JSON.parse(text) as { clusters: { cluster: { server: string } }[] };
  for (const c of cfg.clusters) c.cluster.server = server;
  return JSON.stringify(cfg, null, 2);
}
