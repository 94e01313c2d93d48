// The floor of any Node.js route controller, for the `shipped` scenario: no
// dependencies, only the I/O every such daemon does. It LISTs and WATCHes
// nodes over TLS with a client certificate (keeping name and pod CIDRs per
// node, as an informer would), renews nothing and reconciles nothing, and
// serves an HTTP and an HTTPS endpoint. Its resident memory says how much of
// the daemon's is Node itself rather than this project's code.
//
//   FLOOR_SERVER=https://… FLOOR_CA=… FLOOR_CERT=… FLOOR_KEY=… (PEM files)
//   node bench/peer/node-floor.mjs    prints "synced <n>" once the LIST is in
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import process from 'node:process';

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};
const server = env('FLOOR_SERVER');
const tls = {
  ca: fs.readFileSync(env('FLOOR_CA')),
  cert: fs.readFileSync(env('FLOOR_CERT')),
  key: fs.readFileSync(env('FLOOR_KEY')),
};
const agent = new https.Agent({ ...tls, keepAlive: true });
const nodes = new Map();

function keep(o) {
  if (o?.metadata?.name) nodes.set(o.metadata.name, { podCIDRs: o.spec?.podCIDRs ?? [] });
}

function get(path, onLine) {
  return new Promise((resolve, reject) => {
    https
      .get(`${server}${path}`, { agent }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`${path}: HTTP ${res.statusCode}`));
        res.setEncoding('utf8');
        let buf = '';
        res.on('data', (c) => {
          buf += c;
          if (!onLine) return;
          for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
            const line = buf.slice(0, i);
            buf = buf.slice(i + 1);
            if (line.trim() !== '') onLine(JSON.parse(line));
          }
        });
        res.on('end', () => resolve(buf));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

http.createServer((_, res) => res.end('ok')).listen(0, '127.0.0.1');
https.createServer({ cert: tls.cert, key: tls.key }, (_, res) => res.end('ok')).listen(0, '127.0.0.1');

const list = JSON.parse(await get('/api/v1/nodes'));
for (const o of list.items) keep(o);
process.stdout.write(`synced ${nodes.size}\n`);
let rv = list.metadata.resourceVersion;
for (;;) {
  await get(
    `/api/v1/nodes?watch=true&allowWatchBookmarks=true&resourceVersion=${rv}&timeoutSeconds=600`,
    (ev) => {
      rv = ev.object?.metadata?.resourceVersion ?? rv;
      if (ev.type === 'DELETED') nodes.delete(ev.object?.metadata?.name);
      else if (ev.type !== 'BOOKMARK') keep(ev.object);
    },
  );
}
