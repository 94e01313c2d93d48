// An independent encoder of the apiserver's protobuf answers for tests: the
// messages of k8s.io/api core/v1 and apimachinery meta/v1 generated.proto
// that a node LIST carries (copied field numbers, a few skipped fields kept
// so the decoder's skipping is exercised), compiled by protobufjs.
import protobuf from 'protobufjs';

const SCHEMA = `
syntax = "proto2";
package k8s;
message Time { optional int64 seconds = 1; optional int32 nanos = 2; }
message FieldsV1 { optional bytes Raw = 1; }
message ManagedFieldsEntry {
  optional string manager = 1; optional string operation = 2; optional string apiVersion = 3;
  optional Time time = 4; optional string fieldsType = 6; optional FieldsV1 fieldsV1 = 7;
  optional string subresource = 8;
}
message ObjectMeta {
  optional string name = 1; optional string generateName = 2; optional string namespace = 3;
  optional string selfLink = 4; optional string uid = 5; optional string resourceVersion = 6;
  optional int64 generation = 7; optional Time creationTimestamp = 8; optional Time deletionTimestamp = 9;
  optional int64 deletionGracePeriodSeconds = 10; map<string, string> labels = 11;
  map<string, string> annotations = 12; repeated string finalizers = 14;
  repeated ManagedFieldsEntry managedFields = 17;
}
message ListMeta {
  optional string selfLink = 1; optional string resourceVersion = 2; optional string continue = 3;
  optional int64 remainingItemCount = 4;
}
message Taint { optional string key = 1; optional string value = 2; optional string effect = 3; optional Time timeAdded = 4; }
message NodeSpec {
  optional string podCIDR = 1; optional string externalID = 2; optional string providerID = 3;
  optional bool unschedulable = 4; repeated Taint taints = 5; repeated string podCIDRs = 7;
}
message NodeCondition {
  optional string type = 1; optional string status = 2; optional Time lastHeartbeatTime = 3;
  optional Time lastTransitionTime = 4; optional string reason = 5; optional string message = 6;
}
message NodeAddress { optional string type = 1; optional string address = 2; }
message Quantity { optional string string = 1; }
message ContainerImage { repeated string names = 1; optional int64 sizeBytes = 2; }
message NodeSystemInfo { optional string machineID = 1; optional string kernelVersion = 3; optional string kubeletVersion = 7; }
message NodeStatus {
  map<string, Quantity> capacity = 1; map<string, Quantity> allocatable = 2; optional string phase = 3;
  repeated NodeCondition conditions = 4; repeated NodeAddress addresses = 5;
  optional NodeSystemInfo nodeInfo = 7; repeated ContainerImage images = 8; repeated string volumesInUse = 9;
}
message Node { optional ObjectMeta metadata = 1; optional NodeSpec spec = 2; optional NodeStatus status = 3; }
message NodeList { optional ListMeta metadata = 1; repeated Node items = 2; }
message StatusDetails { optional string name = 1; optional string kind = 3; optional int32 retryAfterSeconds = 5; }
message Status {
  optional ListMeta metadata = 1; optional string status = 2; optional string message = 3;
  optional string reason = 4; optional StatusDetails details = 5; optional int32 code = 6;
}
message TypeMeta { optional string apiVersion = 1; optional string kind = 2; }
message Unknown { optional TypeMeta typeMeta = 1; optional bytes raw = 2; optional string contentEncoding = 3; optional string contentType = 4; }
`;

const root = protobuf.parse(SCHEMA).root;

export const types = {
  Node: root.lookupType('k8s.Node'),
  NodeList: root.lookupType('k8s.NodeList'),
  Status: root.lookupType('k8s.Status'),
  Unknown: root.lookupType('k8s.Unknown'),
};

const MAGIC = Buffer.from('k8s\0', 'latin1');

/** The apiserver's framing: "k8s\0" + runtime.Unknown { typeMeta, raw, "", "" }. */
export function envelope(kind: string, raw: Uint8Array): Buffer {
  const unknown = types.Unknown.encode(
    types.Unknown.fromObject({
      typeMeta: { apiVersion: 'v1', kind },
      raw,
      contentEncoding: '',
      contentType: '',
    }),
  ).finish();
  return Buffer.concat([MAGIC, unknown]);
}

/** A NodeList answer; `nodes` and `metadata` are plain objects in the proto schema's shape. */
export function encodeNodeList(nodes: object[], metadata: object): Buffer {
  const list = types.NodeList.fromObject({ metadata, items: nodes });
  return envelope('NodeList', types.NodeList.encode(list).finish());
}

/** A Status (error) answer. */
export function encodeStatus(status: object): Buffer {
  return envelope('Status', types.Status.encode(types.Status.fromObject(status)).finish());
}
