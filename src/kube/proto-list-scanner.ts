// Walks a protobuf node LIST (R110) as its bytes arrive, one Node at a time,
// like list-scanner.ts does for JSON. The apiserver's protobuf answer is
// the magic "k8s\0" then a runtime.Unknown { typeMeta = 1, raw = 2,
// contentEncoding = 3, contentType = 4 } whose raw is a NodeList
// { metadata = 1, items = 2 }; the apiserver streams items as it encodes
// them. Only one item's bytes are held at a time, and fields beyond the
// list's items are skipped without being buffered.
import {
  decodeListMeta,
  decodeNode,
  decodeTypeMetaKind,
  expectMagic,
  PROTOBUF_MAGIC,
  UNKNOWN_RAW,
  UNKNOWN_TYPE_META,
} from './proto-messages.ts';
import { ProtoError, ProtoReader, ProtoTruncated, WIRE_LEN } from './proto-reader.ts';

const EMPTY = Buffer.alloc(0);

const LIST_METADATA = 1;
const LIST_ITEMS = 2;
/** A tag and a length prefix: at most 10 bytes each. */
const MAX_HEADER = 20;

type Phase = 'magic' | 'envelope' | 'list';

/**
 * Streaming decoder of a protobuf-encoded NodeList: `write` chunks, then
 * `end`. `onItem` gets each Node as the JSON-shaped subset node-proto.ts
 * decodes; `end` returns `{ kind, metadata: { resourceVersion, continue } }`
 * like ListScanner's rest. Throws ProtoError on malformed or truncated input.
 */
export class ProtoListScanner {
  private readonly onItem: (item: unknown) => void;
  private phase: Phase = 'magic';
  /** Bytes not yet consumed: `buf[pos…]` then `queued`. */
  private buf: Buffer = EMPTY;
  private pos = 0;
  private queued: Buffer[] = [];
  private queuedBytes = 0;
  /** Bytes of a field being skipped that have not arrived yet. */
  private skipping = 0;
  /** Bytes of the NodeList (Unknown.raw) not yet consumed, in phase 'list'. */
  private listLeft = 0;
  private kind = '';
  private sawList = false;
  private metadata: Record<string, unknown> = {};

  constructor(onItem: (item: unknown) => void) {
    this.onItem = onItem;
  }

  write(chunk: Buffer): void {
    if (chunk.length === 0) return;
    if (this.skipping > 0) {
      const n = Math.min(this.skipping, chunk.length);
      this.skipping -= n; // already counted off listLeft when the skip began
      if (n === chunk.length) return;
      chunk = chunk.subarray(n);
    }
    this.queued.push(chunk);
    this.queuedBytes += chunk.length;
    this.pump(false);
  }

  end(): Record<string, unknown> {
    this.pump(true);
    if (this.phase !== 'envelope' || this.skipping > 0 || this.available() > 0) {
      throw new ProtoError(
        `truncated protobuf list (${this.phase === 'list' ? 'inside its items' : this.phase})`,
      );
    }
    if (!this.sawList) throw new ProtoError('protobuf answer without a list');
    return { kind: this.kind, metadata: this.metadata };
  }

  private available(): number {
    return this.buf.length - this.pos + this.queuedBytes;
  }

  /**
   * Makes `n` bytes contiguous at `buf[pos]`, or returns false if they have
   * not all arrived. Chunks are used in place; only a field that straddles
   * chunks is copied, exactly its bytes (copying whole chunks cost the daemon
   * 6 MB of resident memory at 1,000 nodes: glibc keeps the freed copies).
   */
  private ensure(n: number): boolean {
    if (this.buf.length - this.pos >= n) return true;
    if (this.available() < n) return false;
    this.nextChunkIfDone();
    if (this.buf.length - this.pos >= n) return true;
    const parts = [this.buf.subarray(this.pos)];
    let have = parts[0]!.length;
    while (have < n) {
      const head = this.queued[0]!;
      const take = Math.min(head.length, n - have);
      parts.push(take === head.length ? head : head.subarray(0, take));
      if (take === head.length) this.queued.shift();
      else this.queued[0] = head.subarray(take);
      this.queuedBytes -= take;
      have += take;
    }
    this.buf = Buffer.concat(parts, n);
    this.pos = 0;
    return true;
  }

  /** Moves on to the next chunk, without copying, once the current one is used up. */
  private nextChunkIfDone(): void {
    while (this.pos === this.buf.length && this.queued.length > 0) {
      this.buf = this.queued.shift()!;
      this.queuedBytes -= this.buf.length;
      this.pos = 0;
    }
  }

  /** Consumes `n` bytes, some of which may not have arrived yet. */
  private skip(n: number): void {
    const have = this.buf.length - this.pos;
    if (n <= have) {
      this.pos += n;
      return;
    }
    this.pos = this.buf.length;
    let left = n - have;
    while (left > 0 && this.queued.length > 0) {
      const head = this.queued[0]!;
      if (head.length <= left) {
        left -= head.length;
        this.queuedBytes -= head.length;
        this.queued.shift();
      } else {
        this.queued[0] = head.subarray(left);
        this.queuedBytes -= left;
        left = 0;
      }
    }
    this.skipping = left;
  }

  /**
   * Reads a field header (tag, and length for LEN fields) at `buf[pos]`, or
   * undefined while it has not fully arrived. Non-LEN values are consumed here.
   * Read in place where it can be: the apiserver writes each item's header
   * and body separately, so joining the header with the body's first bytes
   * would make every body straddle two pieces and be copied.
   */
  private header(atEnd: boolean): { field: number; length: number; start: number } | undefined {
    this.nextChunkIfDone();
    let h = this.headerInPlace();
    if (h === undefined) {
      // Split across chunks: join just enough bytes.
      const want = Math.min(MAX_HEADER, this.phase === 'list' ? this.listLeft : this.available());
      if (this.buf.length - this.pos < want && this.ensure(want)) h = this.headerInPlace();
    }
    if (h === undefined && atEnd) throw new ProtoError('truncated protobuf list (a field header)');
    return h;
  }

  private headerInPlace(): { field: number; length: number; start: number } | undefined {
    const start = this.pos;
    const r = new ProtoReader(this.buf, start, this.buf.length);
    let tag: number;
    let length = -1;
    try {
      tag = r.tag();
      if ((tag & 7) === WIRE_LEN) length = r.varint();
      else r.skip(tag & 7);
    } catch (err) {
      if (err instanceof ProtoTruncated) return undefined;
      throw err;
    }
    this.consumed(r.pos - start);
    return { field: tag >>> 3, length, start };
  }

  private consumed(n: number): void {
    this.pos += n;
    if (this.phase !== 'list') return;
    this.listLeft -= n;
    if (this.listLeft < 0) throw new ProtoError(`a field header ran ${-this.listLeft} bytes past the list`);
  }

  private pump(atEnd: boolean): void {
    for (;;) {
      if (this.skipping > 0) return;
      if (this.phase === 'magic') {
        if (!this.ensure(PROTOBUF_MAGIC.length)) return;
        expectMagic(this.buf, this.pos);
        this.pos += PROTOBUF_MAGIC.length;
        this.phase = 'envelope';
        continue;
      }
      if (this.phase === 'list' && this.listLeft === 0) {
        this.phase = 'envelope';
        continue;
      }
      if (this.available() === 0) return;
      const h = this.header(atEnd);
      if (h === undefined) return;
      if (h.length < 0) continue;
      if (this.phase === 'envelope') {
        if (h.field === UNKNOWN_RAW) {
          if (this.sawList) throw new ProtoError('protobuf answer with two lists');
          this.sawList = true;
          this.phase = 'list';
          this.listLeft = h.length;
          continue;
        }
        if (h.field !== UNKNOWN_TYPE_META) {
          this.skip(h.length);
          continue;
        }
      } else if (h.length > this.listLeft) {
        throw new ProtoError(`list field of ${h.length} bytes, ${this.listLeft} left in the list`);
      } else if (h.field !== LIST_METADATA && h.field !== LIST_ITEMS) {
        this.skip(h.length);
        this.listLeft -= h.length;
        continue;
      }
      if (!this.ensure(h.length)) {
        // Re-read the header once the whole field is here.
        if (this.phase === 'list') this.listLeft += this.pos - h.start;
        this.pos = h.start;
        if (atEnd) throw new ProtoError(`truncated protobuf list (a ${h.length}-byte field)`);
        return;
      }
      this.field(h.field, h.length);
    }
  }

  /** Decodes one whole field at `buf[pos]` of `length` bytes. */
  private field(field: number, length: number): void {
    const start = this.pos;
    const end = start + length;
    if (this.phase === 'envelope') {
      this.kind = decodeTypeMetaKind(this.buf, start, end);
      if (this.kind !== '' && this.kind !== 'NodeList') {
        throw new ProtoError(`expected a NodeList, got ${this.kind}`);
      }
    } else if (field === LIST_METADATA) {
      this.metadata = decodeListMeta(this.buf, start, end);
    } else {
      this.onItem(decodeNode(this.buf, start, end));
    }
    this.consumed(length);
  }
}
