// A byte forwarder between TCP ports and Unix sockets, run inside a pod's network namespace
// (`ip netns exec POD node forward.ts ...`). A Unix socket is a file, so it crosses network
// namespaces: a pod reaches the control plane's loopback ports, and the test reaches the pod's,
// with nothing but loopback and files, as kubelet's port-forward does. No library does this
// small job (socat is not on every machine), hence these few lines.
//
//   node forward.ts 'tcp:127.0.0.1:6443=>unix:/dir/6443.sock' 'unix:/dir/p10258.sock=>tcp:127.0.0.1:10258'
//
// Prints "ready" on stdout once every listener is bound.
import * as fs from 'node:fs';
import * as net from 'node:net';

export type Endpoint = { kind: 'tcp'; host: string; port: number } | { kind: 'unix'; path: string };

export function parseEndpoint(text: string): Endpoint {
  if (text.startsWith('unix:')) return { kind: 'unix', path: text.slice('unix:'.length) };
  const m = /^tcp:(.+):(\d+)$/.exec(text);
  if (m === null) throw new Error(`not an endpoint (tcp:HOST:PORT or unix:PATH): ${text}`);
  return { kind: 'tcp', host: m[1]!, port: Number(m[2]) };
}

function connectTo(e: Endpoint): net.Socket {
  return e.kind === 'unix' ? net.connect(e.path) : net.connect(e.port, e.host);
}

/** Listens on `from` and pipes every connection to a new connection to `to`. */
export function forward(from: Endpoint, to: Endpoint): Promise<net.Server> {
  const server = net.createServer((inbound) => {
    const outbound = connectTo(to);
    inbound.pipe(outbound).pipe(inbound);
    const close = (): void => {
      inbound.destroy();
      outbound.destroy();
    };
    inbound.on('error', close);
    outbound.on('error', close);
    inbound.on('close', close);
    outbound.on('close', close);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    if (from.kind === 'unix') {
      fs.rmSync(from.path, { force: true });
      server.listen(from.path, () => resolve(server));
    } else {
      server.listen(from.port, from.host, () => resolve(server));
    }
  });
}

if (import.meta.main) {
  const specs = process.argv.slice(2);
  if (specs.length === 0) {
    process.stderr.write('usage: forward.ts LISTEN=>CONNECT ...\n');
    process.exit(2);
  }
  await Promise.all(
    specs.map((s) => {
      const [a, b] = s.split('=>');
      if (a === undefined || b === undefined) throw new Error(`not LISTEN=>CONNECT: ${s}`);
      return forward(parseEndpoint(a), parseEndpoint(b));
    }),
  );
  process.stdout.write('ready\n');
  process.on('SIGTERM', () => process.exit(0));
}
