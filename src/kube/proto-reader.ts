// The protobuf wire format, read in place: varints, length-delimited fields
// and skipping whatever is not asked for. Hand-written on purpose: the node
// LIST (proto-list-scanner.ts) must be decoded as it streams, one Node at a time,
// reading a dozen fields of Node and skipping the rest (managedFields, images,
// nodeInfo … most of the bytes) without materialising them. protobufjs and
// its kin decode whole messages held in memory into full objects, which is
// the 100+ MB transient this path exists to avoid; what they would add over
// this file is a schema compiler we do not need for seven fixed messages.

export class ProtoError extends Error {
  override readonly name = 'ProtoError';
}

/** Ran out of bytes mid-field: more of the stream is needed (or it was cut short). */
export class ProtoTruncated extends ProtoError {}

export const WIRE_VARINT = 0;
export const WIRE_I64 = 1;
export const WIRE_LEN = 2;
export const WIRE_I32 = 5;

/** A cursor over `buf[pos, end)`. */
export class ProtoReader {
  readonly buf: Buffer;
  pos: number;
  end: number;

  constructor(buf: Buffer, pos = 0, end = buf.length) {
    this.buf = buf;
    this.pos = pos;
    this.end = end;
  }

  /**
   * An unsigned varint as a number; exact up to 2^53, which covers every
   * length and tag. Larger (or negative int64) values come back rounded,
   * which only int64 fields could carry (see int64()).
   */
  varint(): number {
    const { buf, end } = this;
    let pos = this.pos;
    if (pos >= end) throw new ProtoTruncated('varint past the end');
    let b = buf[pos++]!;
    if (b < 0x80) {
      this.pos = pos;
      return b;
    }
    let value = b & 0x7f;
    let scale = 0x80;
    for (let i = 1; i < 10; i++) {
      if (pos >= end) throw new ProtoTruncated('varint past the end');
      b = buf[pos++]!;
      value += (b & 0x7f) * scale;
      if (b < 0x80) {
        this.pos = pos;
        return value;
      }
      scale *= 0x80;
    }
    throw new ProtoError('varint longer than 10 bytes');
  }

  /** A signed int64 varint (two's complement, as Go writes negative int64). */
  int64(): number {
    const start = this.pos;
    const v = this.varint();
    if (this.pos - start < 10) return v;
    // Ten bytes: a negative number. Re-read exactly.
    let big = 0n;
    for (let i = 0; i < 10; i++) big |= BigInt(this.buf[start + i]! & 0x7f) << BigInt(7 * i);
    return Number(BigInt.asIntN(64, big));
  }

  /** A field's key: [field number, wire type]. */
  tag(): number {
    return this.varint();
  }

  /** The length prefix of a LEN field; checks it fits in what is left. */
  length(): number {
    const n = this.varint();
    if (n > this.end - this.pos) throw new ProtoTruncated(`field of ${n} bytes, ${this.end - this.pos} left`);
    return n;
  }

  /** A LEN field read as UTF-8 (a fresh flat string, sharing no storage with the buffer). */
  string(): string {
    const n = this.length();
    const s = n === 0 ? '' : this.buf.toString('utf8', this.pos, this.pos + n);
    this.pos += n;
    return s;
  }

  /** Skips one field's value of `wireType`. */
  skip(wireType: number): void {
    switch (wireType) {
      case WIRE_VARINT:
        this.varint();
        return;
      case WIRE_I64:
        this.advance(8);
        return;
      case WIRE_LEN: {
        const n = this.length(); // not `pos += length()`: that reads pos before the prefix
        this.pos += n;
        return;
      }
      case WIRE_I32:
        this.advance(4);
        return;
      default:
        throw new ProtoError(`unsupported wire type ${wireType} at byte ${this.pos}`);
    }
  }

  private advance(n: number): void {
    if (this.end - this.pos < n) throw new ProtoTruncated(`${n}-byte field past the end`);
    this.pos += n;
  }
}

/** Checks a field's wire type before it is read as a given kind. */
export function expectWire(tag: number, wire: number, what: string): void {
  if ((tag & 7) !== wire) throw new ProtoError(`${what}: wire type ${tag & 7}, expected ${wire}`);
}
