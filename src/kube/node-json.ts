// JSON.parse of Node objects in a V8 context of their own. V8 gives each
// parsed object a hidden class by following transitions from Object's initial
// map, a tree that every object literal and JSON.parse of the realm grows. In
// the daemon that tree is crowded (Leases, Status objects, this project's own
// literals), and parsing a node event searched it at every property (perf:
// TransitionArray::SearchDetailsAndGetTarget, FindTransitionToField): with
// 1,000 nodes heartbeating, the daemon spent ~1.4× the CPU of a dependency-
// free Node program doing the same watch. A fresh context holds node shapes
// only (~0.5 MB resident). Parsed objects are only read (R58 copies what it
// keeps into this realm), so nothing depends on their prototypes.
import * as vm from 'node:vm';

const realmParse = vm.runInNewContext('JSON.parse') as (text: string) => unknown;

/** JSON.parse for apiserver node payloads; throws this realm's SyntaxError on bad input. */
export function parseNodeJson(text: string): unknown {
  try {
    return realmParse(text);
  } catch (err) {
    throw new SyntaxError((err as Error).message);
  }
}
