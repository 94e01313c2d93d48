// A reader for gcfg (gopkg.in/gcfg.v1), the git-config syntax of cloud-provider-openstack's
// cloud.conf and cloud-provider-gcp's gce.conf (shared by the openstack and gce plug-ins).
// Hand-written because the INI readers on npm differ from gcfg where it matters
// here: gcfg names are case-insensitive, values lose their double quotes and honour `\"`, `\\`,
// `\n`, `\t` and a trailing `\` continuation, `;` and `#` start a comment outside quotes, a
// name without `=` is a boolean true, and `[Section "sub"]` names a subsection. A config that
// upstream's reader accepts must read the same here, so the plug-in can be a drop-in.

export class GcfgSyntaxError extends Error {
  override readonly name: string = 'GcfgSyntaxError';
}

export interface GcfgEntry {
  /** Lower-cased, as gcfg matches names. */
  readonly name: string;
  /** The value with quotes and escapes resolved; 'true' for a bare name. */
  readonly value: string;
  readonly line: number;
}

export interface GcfgSection {
  /** Lower-cased section name. */
  readonly name: string;
  /** The subsection as written (case-sensitive, like gcfg), or undefined. */
  readonly subsection: string | undefined;
  readonly entries: GcfgEntry[];
}

const NAME = /^[A-Za-z][A-Za-z0-9-]*$/;

/** Unquotes and unescapes a value; `line` only for messages. */
function readValue(raw: string, line: number): string {
  let out = '';
  let quoted = false;
  let pendingSpace = '';
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '\\') {
      const next = raw[i + 1];
      const escapes: Record<string, string> = { '"': '"', '\\': '\\', n: '\n', t: '\t', b: '\b' };
      if (next === undefined || escapes[next] === undefined) {
        throw new GcfgSyntaxError(`line ${line}: invalid escape "\\${next ?? ''}"`);
      }
      out += pendingSpace + escapes[next];
      pendingSpace = '';
      i++;
    } else if (c === '"') {
      out += pendingSpace;
      pendingSpace = '';
      quoted = !quoted;
    } else if (!quoted && (c === ';' || c === '#')) {
      break;
    } else if (!quoted && (c === ' ' || c === '\t')) {
      // Kept only if something follows: unquoted trailing blanks are dropped, inner ones kept.
      if (out !== '') pendingSpace += c;
    } else {
      out += pendingSpace + c;
      pendingSpace = '';
    }
  }
  if (quoted) throw new GcfgSyntaxError(`line ${line}: unterminated quote`);
  return out;
}

/** Joins physical lines ending in an unescaped backslash (gcfg's continuation). */
function logicalLines(text: string): { text: string; line: number }[] {
  const out: { text: string; line: number }[] = [];
  const physical = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  for (let i = 0; i < physical.length; i++) {
    const start = i + 1;
    let current = physical[i]!;
    while (/(^|[^\\])(\\\\)*\\$/.test(current) && i + 1 < physical.length) {
      current = current.slice(0, -1) + physical[++i]!;
    }
    out.push({ text: current, line: start });
  }
  return out;
}

/** Parses gcfg text into its sections, in order; a section may repeat (gcfg merges them). */
export function parseGcfg(text: string): GcfgSection[] {
  const sections: GcfgSection[] = [];
  let current: GcfgSection | undefined;
  for (const { text: raw, line } of logicalLines(text)) {
    const trimmed = raw.trim();
    if (trimmed === '' || trimmed.startsWith(';') || trimmed.startsWith('#')) continue;
    if (trimmed.startsWith('[')) {
      const m = /^\[\s*([A-Za-z][A-Za-z0-9.-]*)\s*(?:"((?:[^"\\]|\\.)*)")?\s*\]\s*(?:[;#].*)?$/.exec(trimmed);
      if (!m) throw new GcfgSyntaxError(`line ${line}: invalid section header ${JSON.stringify(trimmed)}`);
      const subsection = m[2]?.replace(/\\(.)/g, '$1');
      current = { name: m[1]!.toLowerCase(), subsection, entries: [] };
      sections.push(current);
      continue;
    }
    if (current === undefined) {
      throw new GcfgSyntaxError(`line ${line}: variable outside a section: ${JSON.stringify(trimmed)}`);
    }
    const eq = trimmed.indexOf('=');
    const name = (eq === -1 ? trimmed.replace(/\s*[;#].*$/, '') : trimmed.slice(0, eq)).trim();
    if (!NAME.test(name))
      throw new GcfgSyntaxError(`line ${line}: invalid variable name ${JSON.stringify(name)}`);
    const value = eq === -1 ? 'true' : readValue(trimmed.slice(eq + 1), line);
    current.entries.push({ name: name.toLowerCase(), value, line });
  }
  return sections;
}
