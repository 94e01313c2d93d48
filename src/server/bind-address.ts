// Bind addresses of the HTTP endpoints: `host:port`, `[v6]:port`, `:port`
// (all interfaces) or `0` (disabled), as controller-runtime accepts them.

export type BindAddress = { readonly host: string | undefined; readonly port: number } | 'disabled';

export function parseBindAddress(v: string): BindAddress {
  if (v === '0') return 'disabled';
  const m = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(v);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new Error('want host:port, :port or 0');
  const host = m[1] ?? m[2] ?? '';
  return { host: host === '' ? undefined : host, port };
}
