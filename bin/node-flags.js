// V8 settings the daemon runs with, shared by the executable (which applies
// them at start-up), the container image and the benchmark's peer.
//
// The node informer's LIST and a reconcile allocate short-lived objects fast
// enough that V8 grows its young generation to its maximum (2 × 32 MB on
// 64-bit) and keeps those pages resident afterwards: at 5 000 nodes that is
// ~60 MB of the process's RSS, more than the node cache and everything else on
// the JavaScript heap together. Capped at 2 MB semi-spaces, RSS stays ~60 MB
// lower for ~20 % more CPU per reconcile (docs/informer-memory.md). The size
// is fixed when the heap is set up, so it cannot be changed from inside the
// program (v8.setFlagsFromString has no effect by then).
export const DAEMON_NODE_FLAGS = ['--max-semi-space-size=2'];

/**
 * The flags still to add: none when the user already sized V8's heap on the
 * command line or in NODE_OPTIONS (V8 rejects some combinations, and their
 * choice wins).
 */
export function missingNodeFlags(execArgv, nodeOptions) {
  const given = [...execArgv, ...(nodeOptions ?? '').split(/\s+/)];
  const sized = given.some((a) => /^--max[-_](semi[-_]space|heap)[-_]size\b/.test(a));
  return sized ? [] : DAEMON_NODE_FLAGS;
}
