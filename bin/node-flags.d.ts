export declare const DAEMON_NODE_FLAGS: readonly string[];
export declare function missingNodeFlags(
  execArgv: readonly string[],
  nodeOptions: string | undefined,
): readonly string[];
