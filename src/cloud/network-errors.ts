// Socket-level error codes (Node's `err.code`) after which a cloud call's outcome is unknown and
// worth retrying: shared by the plug-ins whose SDKs surface them unchanged.
export const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);
