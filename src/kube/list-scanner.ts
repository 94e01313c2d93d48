// Walks a LIST response one item at a time, on raw bytes as they arrive.
// JSON.parse of a whole page of 500 kubelet nodes (~7 MB) allocates ~40 MB of
// objects at once; a page-sized string or Buffer, held while it is parsed,
// makes V8 grow its young generation and glibc keep freed pages, both for
// good, although the informer keeps ~2 KB per node (R58). Here only one item
// at a time is assembled, decoded and parsed. Structural characters are ASCII
// and never occur inside a multi-byte UTF-8 sequence, so scanning bytes is
// exact, and an item's pieces are decoded together so a character split
// across chunks survives.

export class ListScanError extends Error {
  override readonly name = 'ListScanError';
}

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;

function isWs(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; // space \n \r \t
}

type Phase = 'start' | 'key' | 'colon' | 'value' | 'after-value' | 'items' | 'items-after' | 'done';

/** One JSON value being captured: a compound (object/array), a string or a literal. */
interface Capture {
  readonly kind: 'compound' | 'string' | 'literal';
  depth: number;
  inString: boolean;
  escaped: boolean;
  readonly pieces: Buffer[];
  start: number;
}

/**
 * Streaming scanner of a Kubernetes list object: `write` chunks, then `end`.
 * `onItem` gets each parsed element of the top-level `items` array; `end`
 * returns the other top-level fields parsed (metadata, kind, …). Throws
 * ListScanError (or SyntaxError from `parse`) on malformed input.
 */
export class ListScanner {
  private readonly onItem: (item: unknown) => void;
  private phase: Phase = 'start';
  private cap: Capture | undefined;
  private key = '';
  private readonly rest: Record<string, unknown> = {};

  private readonly parse: (text: string) => unknown;

  /** `parse` decodes each item and top-level value (node lists: parseNodeJson). */
  constructor(onItem: (item: unknown) => void, parse: (text: string) => unknown = JSON.parse) {
    this.onItem = onItem;
    this.parse = parse;
  }

  write(chunk: Buffer): void {
    for (let i = 0; i < chunk.length; i++) {
      if (this.cap?.kind === 'compound') {
        // Items are compounds of ~10 KB each: skip through them without a call per byte.
        const end = skipCompound(this.cap, chunk, i);
        if (end < 0) break;
        this.finish(chunk, end);
        i = end - 1;
        continue;
      }
      const c = chunk[i]!;
      if (this.cap) {
        const r = this.feed(this.cap, c);
        if (r === 'more') continue;
        // A literal ends at the byte after it, which is then structural.
        const end = r === 'ended-before' ? i : i + 1;
        this.finish(chunk, end);
        if (r === 'ended') continue;
      }
      this.structural(i, c);
    }
    if (this.cap) {
      this.cap.pieces.push(chunk.subarray(this.cap.start));
      this.cap.start = 0;
    }
  }

  end(): Record<string, unknown> {
    if (this.cap?.kind === 'literal') this.finish(Buffer.alloc(0), 0);
    if (this.phase !== 'done') throw new ListScanError(`truncated list (in ${this.phase})`);
    return this.rest;
  }

  private structural(i: number, c: number): void {
    if (isWs(c)) return;
    switch (this.phase) {
      case 'start':
        if (c !== OPEN_BRACE) throw new ListScanError('a list must be a JSON object');
        this.phase = 'key';
        return;
      case 'key':
        if (c === CLOSE_BRACE && Object.keys(this.rest).length === 0 && this.key === '') {
          this.phase = 'done';
          return;
        }
        if (c !== QUOTE) throw new ListScanError(`expected a key, got ${String.fromCharCode(c)}`);
        this.begin('string', i);
        return;
      case 'colon':
        if (c !== COLON) throw new ListScanError(`expected ':', got ${String.fromCharCode(c)}`);
        this.phase = 'value';
        return;
      case 'value':
        if (this.key === 'items' && c === OPEN_BRACKET) {
          this.phase = 'items';
          return;
        }
        this.beginValue(i, c);
        return;
      case 'after-value':
        if (c === COMMA) this.phase = 'key';
        else if (c === CLOSE_BRACE) this.phase = 'done';
        else throw new ListScanError(`expected ',' or '}', got ${String.fromCharCode(c)}`);
        return;
      case 'items':
        if (c === CLOSE_BRACKET) {
          this.phase = 'after-value';
          return;
        }
        this.beginValue(i, c);
        return;
      case 'items-after':
        if (c === COMMA) this.phase = 'items';
        else if (c === CLOSE_BRACKET) this.phase = 'after-value';
        else throw new ListScanError(`expected ',' or ']', got ${String.fromCharCode(c)}`);
        return;
      case 'done':
        throw new ListScanError('trailing data after the list');
    }
  }

  private beginValue(i: number, c: number): void {
    if (c === OPEN_BRACE || c === OPEN_BRACKET) this.begin('compound', i).depth = 1;
    else if (c === QUOTE) this.begin('string', i);
    else if (c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || c === COLON) {
      throw new ListScanError(`expected a value, got ${String.fromCharCode(c)}`);
    } else this.begin('literal', i);
  }

  private begin(kind: Capture['kind'], i: number): Capture {
    this.cap = { kind, depth: 0, inString: kind === 'string', escaped: false, pieces: [], start: i };
    return this.cap;
  }

  /** Consumes one byte of the value after its first one. */
  private feed(cap: Capture, c: number): 'more' | 'ended' | 'ended-before' {
    if (cap.kind === 'literal') {
      return isWs(c) || c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET ? 'ended-before' : 'more';
    }
    if (cap.inString) {
      if (cap.escaped) cap.escaped = false;
      else if (c === BACKSLASH) cap.escaped = true;
      else if (c === QUOTE) {
        cap.inString = false;
        if (cap.kind === 'string') return 'ended';
      }
      return 'more';
    }
    if (c === QUOTE) cap.inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) cap.depth++;
    else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --cap.depth === 0) return 'ended';
    return 'more';
  }

  /** The captured value ends before `end` in `chunk`: parse it and move on. */
  private finish(chunk: Buffer, end: number): void {
    const cap = this.cap!;
    this.cap = undefined;
    cap.pieces.push(chunk.subarray(cap.start, end));
    const bytes = cap.pieces.length === 1 ? cap.pieces[0]! : Buffer.concat(cap.pieces);
    const value: unknown = this.parse(bytes.toString('utf8'));
    switch (this.phase) {
      case 'key':
        this.key = value as string;
        this.phase = 'colon';
        return;
      case 'value':
        this.rest[this.key] = value;
        this.phase = 'after-value';
        return;
      case 'items':
        this.phase = 'items-after';
        this.onItem(value);
        return;
      default:
        throw new ListScanError(`unexpected value in ${this.phase}`);
    }
  }
}

/**
 * The index after the compound `cap` closes in `chunk`, reading from `from`;
 * -1 when it runs past the chunk (its state is kept in `cap`). String contents
 * are skipped with indexOf (memchr): a quote ends the string unless an odd run
 * of backslashes precedes it. Outside strings, only brackets and quotes count.
 */
function skipCompound(cap: Capture, chunk: Buffer, from: number): number {
  let depth = cap.depth;
  let inString = cap.inString;
  let i = from;
  const n = chunk.length;
  if (inString && cap.escaped && i < n) {
    cap.escaped = false;
    i++;
  }
  while (i < n) {
    if (inString) {
      let q = chunk.indexOf(QUOTE, i);
      while (q >= 0 && backslashesBefore(chunk, q, i) % 2 === 1) q = chunk.indexOf(QUOTE, q + 1);
      if (q < 0) {
        cap.escaped = backslashesBefore(chunk, n, i) % 2 === 1;
        break;
      }
      inString = false;
      i = q + 1;
      continue;
    }
    const c = chunk[i++]!;
    if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0) return i;
  }
  cap.depth = depth;
  cap.inString = inString;
  return -1;
}

/** The run of backslashes right before `end`, not reaching before `floor`. */
function backslashesBefore(chunk: Buffer, end: number, floor: number): number {
  let k = 0;
  while (end - k - 1 >= floor && chunk[end - k - 1] === BACKSLASH) k++;
  return k;
}

/** The whole-body form: scans `input` in one go. */
export function scanList(input: Buffer | string, onItem: (item: unknown) => void): Record<string, unknown> {
  const s = new ListScanner(onItem);
  s.write(typeof input === 'string' ? Buffer.from(input, 'utf8') : input);
  return s.end();
}
