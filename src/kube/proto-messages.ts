// Decoders for the apiserver protobuf messages this project reads: a node LIST (k8s.io/api core/v1 and
// apimachinery meta/v1 generated.proto; field numbers below), producing the
// same plain objects JSON.parse gives for those fields, so transformNode
// (R58) reads either encoding alike. Only what R58 keeps is decoded; every
// other field is skipped by its length. Go's JSON omits empty strings of
// `omitempty` fields and renders metav1.Time as RFC 3339 in seconds (zero
// time as null), while its protobuf writes empty strings and omits zero
// times: both are mapped to what JSON would show.
import { expectWire, ProtoError, ProtoReader, WIRE_LEN, WIRE_VARINT } from './proto-reader.ts';

type Obj = Record<string, unknown>;

export const PROTOBUF_CONTENT_TYPE = 'application/vnd.kubernetes.protobuf';
/** Every protobuf body of the apiserver starts with these bytes ("k8s\0"). */
export const PROTOBUF_MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
/** runtime.Unknown, the envelope after the magic: { typeMeta = 1, raw = 2, … }. */
export const UNKNOWN_TYPE_META = 1;
export const UNKNOWN_RAW = 2;

// Field numbers (k8s.io/api/core/v1/generated.proto, apimachinery meta/v1).
const NODE_METADATA = 1;
const NODE_SPEC = 2;
const NODE_STATUS = 3;
const META_NAME = 1;
const META_UID = 5;
const META_RESOURCE_VERSION = 6;
const META_CREATION_TIMESTAMP = 8;
const SPEC_POD_CIDR = 1;
const SPEC_PROVIDER_ID = 3;
const SPEC_POD_CIDRS = 7;
const STATUS_CONDITIONS = 4;
const STATUS_ADDRESSES = 5;
const ADDRESS_TYPE = 1;
const ADDRESS_ADDRESS = 2;
const CONDITION_TYPE = 1;
const CONDITION_STATUS = 2;
const CONDITION_LAST_HEARTBEAT = 3;
const CONDITION_LAST_TRANSITION = 4;
const CONDITION_REASON = 5;
const CONDITION_MESSAGE = 6;
const TIME_SECONDS = 1;
const LIST_RESOURCE_VERSION = 2;
const LIST_CONTINUE = 3;
const STATUS_STATUS = 2;
const STATUS_MESSAGE = 3;
const STATUS_REASON = 4;
const STATUS_DETAILS = 5;
const STATUS_CODE = 6;
const DETAILS_RETRY_AFTER = 5;
const TYPEMETA_KIND = 2;

/** The only condition R58 keeps; others are skipped after their type. */
const NETWORK_UNAVAILABLE = 'NetworkUnavailable';

function str(r: ProtoReader, tag: number, what: string): string {
  expectWire(tag, WIRE_LEN, what);
  return r.string();
}

/** Decodes a nested message with `r` bounded to it, so no field can run past its end. */
function nested<T>(r: ProtoReader, tag: number, what: string, decode: (r: ProtoReader) => T): T {
  expectWire(tag, WIRE_LEN, what);
  const n = r.length();
  const outer = r.end;
  r.end = r.pos + n;
  const v = decode(r);
  r.end = outer;
  return v;
}

/** Sets `o[key]` unless `v` is empty (Go's `omitempty`). */
function setNonEmpty(o: Obj, key: string, v: string): void {
  if (v !== '') o[key] = v;
}

// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the range metav1.Time's JSON renders.
const MIN_SECONDS = -62135596800;
const MAX_SECONDS = 253402300799;

/** metav1.Time { seconds = 1 } → RFC 3339 in seconds, as its JSON; an empty message is the zero time (JSON null). */
function time(r: ProtoReader): string | undefined {
  let seconds: number | undefined;
  while (r.pos < r.end) {
    const tag = r.tag();
    if (tag >>> 3 === TIME_SECONDS) {
      expectWire(tag, WIRE_VARINT, 'Time.seconds');
      seconds = r.int64();
    } else r.skip(tag & 7);
  }
  if (seconds === undefined) return undefined;
  if (seconds < MIN_SECONDS || seconds > MAX_SECONDS) throw new ProtoError(`time out of range: ${seconds} s`);
  return rfc3339(seconds);
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/**
 * Seconds since the epoch as RFC 3339 in UTC, by integer arithmetic (the
 * civil-from-days algorithm): no Date, whose first use costs the daemon about
 * 1 MB of resident memory for nothing a node needs.
 */
function rfc3339(seconds: number): string {
  const days = Math.floor(seconds / 86400);
  const sod = seconds - days * 86400;
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor(
    (doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365,
  );
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  const hh = Math.floor(sod / 3600);
  const mm = Math.floor((sod % 3600) / 60);
  return `${pad(year, 4)}-${pad(month)}-${pad(day)}T${pad(hh)}:${pad(mm)}:${pad(sod % 60)}Z`;
}

function objectMeta(r: ProtoReader): Obj {
  const md: Obj = {};
  while (r.pos < r.end) {
    const tag = r.tag();
    switch (tag >>> 3) {
      case META_NAME:
        setNonEmpty(md, 'name', str(r, tag, 'metadata.name'));
        break;
      case META_UID:
        setNonEmpty(md, 'uid', str(r, tag, 'metadata.uid'));
        break;
      case META_RESOURCE_VERSION:
        setNonEmpty(md, 'resourceVersion', str(r, tag, 'metadata.resourceVersion'));
        break;
      case META_CREATION_TIMESTAMP: {
        const t = nested(r, tag, 'metadata.creationTimestamp', time);
        if (t !== undefined) md['creationTimestamp'] = t;
        break;
      }
      default:
        r.skip(tag & 7);
    }
  }
  return md;
}

function nodeSpec(r: ProtoReader): Obj {
  const spec: Obj = {};
  let cidrs: string[] | undefined;
  while (r.pos < r.end) {
    const tag = r.tag();
    switch (tag >>> 3) {
      case SPEC_POD_CIDR:
        setNonEmpty(spec, 'podCIDR', str(r, tag, 'spec.podCIDR'));
        break;
      case SPEC_PROVIDER_ID:
        setNonEmpty(spec, 'providerID', str(r, tag, 'spec.providerID'));
        break;
      case SPEC_POD_CIDRS:
        (cidrs ??= []).push(str(r, tag, 'spec.podCIDRs'));
        break;
      default:
        r.skip(tag & 7);
    }
  }
  if (cidrs !== undefined) spec['podCIDRs'] = cidrs;
  return spec;
}

function nodeAddress(r: ProtoReader): Obj {
  const a: Obj = { type: '', address: '' };
  while (r.pos < r.end) {
    const tag = r.tag();
    const field = tag >>> 3;
    if (field === ADDRESS_TYPE) a['type'] = str(r, tag, 'address.type');
    else if (field === ADDRESS_ADDRESS) a['address'] = str(r, tag, 'address.address');
    else r.skip(tag & 7);
  }
  return a;
}

/** A NodeCondition, or undefined (and skipped) once its type shows it is not NetworkUnavailable. */
function nodeCondition(r: ProtoReader): Obj | undefined {
  const c: Obj = { type: '', status: '' };
  while (r.pos < r.end) {
    const tag = r.tag();
    switch (tag >>> 3) {
      case CONDITION_TYPE: {
        const type = str(r, tag, 'condition.type');
        if (type !== NETWORK_UNAVAILABLE) {
          r.pos = r.end;
          return undefined;
        }
        c['type'] = type;
        break;
      }
      case CONDITION_STATUS:
        c['status'] = str(r, tag, 'condition.status');
        break;
      case CONDITION_LAST_HEARTBEAT:
      case CONDITION_LAST_TRANSITION: {
        const key = tag >>> 3 === CONDITION_LAST_HEARTBEAT ? 'lastHeartbeatTime' : 'lastTransitionTime';
        const t = nested(r, tag, `condition.${key}`, time);
        if (t !== undefined) c[key] = t;
        break;
      }
      case CONDITION_REASON:
        setNonEmpty(c, 'reason', str(r, tag, 'condition.reason'));
        break;
      case CONDITION_MESSAGE:
        setNonEmpty(c, 'message', str(r, tag, 'condition.message'));
        break;
      default:
        r.skip(tag & 7);
    }
  }
  return c['type'] === NETWORK_UNAVAILABLE ? c : undefined;
}

function nodeStatus(r: ProtoReader): Obj {
  const status: Obj = {};
  let addresses: Obj[] | undefined;
  let conditions: Obj[] | undefined;
  while (r.pos < r.end) {
    const tag = r.tag();
    const field = tag >>> 3;
    if (field === STATUS_ADDRESSES) {
      (addresses ??= []).push(nested(r, tag, 'status.addresses', nodeAddress));
    } else if (field === STATUS_CONDITIONS) {
      conditions ??= [];
      const c = nested(r, tag, 'status.conditions', nodeCondition);
      if (c !== undefined) conditions.push(c);
    } else r.skip(tag & 7);
  }
  if (addresses !== undefined) status['addresses'] = addresses;
  if (conditions !== undefined) status['conditions'] = conditions;
  return status;
}

function node(r: ProtoReader): Obj {
  const node: Obj = {};
  while (r.pos < r.end) {
    const tag = r.tag();
    switch (tag >>> 3) {
      case NODE_METADATA:
        node['metadata'] = nested(r, tag, 'metadata', objectMeta);
        break;
      case NODE_SPEC:
        node['spec'] = nested(r, tag, 'spec', nodeSpec);
        break;
      case NODE_STATUS:
        node['status'] = nested(r, tag, 'status', nodeStatus);
        break;
      default:
        r.skip(tag & 7);
    }
  }
  return node;
}

function listMeta(r: ProtoReader): Obj {
  const md: Obj = {};
  while (r.pos < r.end) {
    const tag = r.tag();
    const field = tag >>> 3;
    if (field === LIST_RESOURCE_VERSION) setNonEmpty(md, 'resourceVersion', str(r, tag, 'resourceVersion'));
    else if (field === LIST_CONTINUE) setNonEmpty(md, 'continue', str(r, tag, 'continue'));
    else r.skip(tag & 7);
  }
  return md;
}

function typeMetaKind(r: ProtoReader): string {
  let kind = '';
  while (r.pos < r.end) {
    const tag = r.tag();
    if (tag >>> 3 === TYPEMETA_KIND) kind = str(r, tag, 'kind');
    else r.skip(tag & 7);
  }
  return kind;
}

function statusDetails(r: ProtoReader): Obj {
  const d: Obj = {};
  while (r.pos < r.end) {
    const tag = r.tag();
    if (tag >>> 3 === DETAILS_RETRY_AFTER) {
      expectWire(tag, WIRE_VARINT, 'retryAfterSeconds');
      d['retryAfterSeconds'] = r.int64();
    } else r.skip(tag & 7);
  }
  return d;
}

function status(r: ProtoReader): Obj {
  const s: Obj = {};
  while (r.pos < r.end) {
    const tag = r.tag();
    switch (tag >>> 3) {
      case STATUS_STATUS:
        setNonEmpty(s, 'status', str(r, tag, 'status'));
        break;
      case STATUS_MESSAGE:
        setNonEmpty(s, 'message', str(r, tag, 'message'));
        break;
      case STATUS_REASON:
        setNonEmpty(s, 'reason', str(r, tag, 'reason'));
        break;
      case STATUS_CODE:
        expectWire(tag, WIRE_VARINT, 'code');
        s['code'] = r.int64();
        break;
      case STATUS_DETAILS:
        s['details'] = nested(r, tag, 'details', statusDetails);
        break;
      default:
        r.skip(tag & 7);
    }
  }
  return s;
}

/** A decoder of one message in `buf[start, end)`. */
const at =
  <T>(decode: (r: ProtoReader) => T) =>
  (buf: Buffer, start: number, end: number): T =>
    decode(new ProtoReader(buf, start, end));

/**
 * A core/v1 Node, as the subset of its JSON that R58 reads: metadata {name,
 * uid, resourceVersion, creationTimestamp}, spec {podCIDR, podCIDRs,
 * providerID}, status {addresses, conditions (only NetworkUnavailable)}.
 * Throws ProtoError on malformed bytes.
 */
export const decodeNode = at(node);
/** metav1.ListMeta → { resourceVersion, continue } (empty strings omitted, as in JSON). */
export const decodeListMeta = at(listMeta);
/** runtime.TypeMeta's kind. */
export const decodeTypeMetaKind = at(typeMetaKind);

/** Throws unless `buf[pos…]` starts with the apiserver's protobuf prefix. */
export function expectMagic(buf: Buffer, pos: number): void {
  if (
    buf.length - pos < PROTOBUF_MAGIC.length ||
    !buf.subarray(pos, pos + PROTOBUF_MAGIC.length).equals(PROTOBUF_MAGIC)
  ) {
    throw new ProtoError('not a Kubernetes protobuf message (no "k8s\\0" prefix)');
  }
}

/** A whole protobuf Status body (an error answer), as its JSON subset: status, message, reason, code, details.retryAfterSeconds. */
export function decodeStatusBody(body: Buffer): Obj {
  expectMagic(body, 0);
  const r = new ProtoReader(body, PROTOBUF_MAGIC.length);
  while (r.pos < r.end) {
    const tag = r.tag();
    if (tag >>> 3 === UNKNOWN_RAW) return nested(r, tag, 'raw', status);
    r.skip(tag & 7);
  }
  throw new ProtoError('protobuf answer without an object');
}
