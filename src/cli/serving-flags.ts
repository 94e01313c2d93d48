// Secure serving flags (SPEC §7.5): component-base's names and defaults for
// --secure-port, --bind-address, the TLS files, delegated authentication and
// authorization. Pure, like flags.ts.
import { isIP } from 'node:net';

export interface SecureServingFlags {
  /** 0: disabled. */
  readonly securePort: number;
  readonly bindAddress: string;
  readonly tlsCertFile: string;
  readonly tlsPrivateKeyFile: string;
  readonly authenticationKubeconfig: string;
  readonly authorizationKubeconfig: string;
  readonly alwaysAllowPaths: readonly string[];
}

/** The raw values by flag name (the last one given, or the default). */
export type FlagValue = (name: string) => string;

export function parseServingFlags(value: FlagValue, errors: string[]): SecureServingFlags {
  const portText = value('secure-port').trim();
  let securePort = 0;
  if (!/^\d{1,5}$/.test(portText) || Number(portText) > 65535) {
    errors.push(`invalid --secure-port "${portText}": must be between 0 and 65535, inclusive; 0 disables`);
  } else {
    securePort = Number(portText);
  }
  const bindAddress = value('bind-address').trim();
  if (isIP(bindAddress) === 0) errors.push(`invalid --bind-address "${bindAddress}": want an IP address`);
  const tlsCertFile = value('tls-cert-file').trim();
  const tlsPrivateKeyFile = value('tls-private-key-file').trim();
  if ((tlsCertFile === '') !== (tlsPrivateKeyFile === '')) {
    errors.push('--tls-cert-file and --tls-private-key-file must be given together');
  }
  const alwaysAllowPaths = value('authorization-always-allow-paths')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  for (const p of alwaysAllowPaths) {
    // k8s.io/apiserver path authorizer: exact paths, or a prefix ending in "/*".
    if (
      !p.startsWith('/') ||
      (p.includes('*') && !p.endsWith('/*')) ||
      p.indexOf('*') !== p.lastIndexOf('*')
    ) {
      errors.push(`invalid --authorization-always-allow-paths "${p}": want /path or /prefix/*`);
    }
  }
  return {
    securePort,
    bindAddress,
    tlsCertFile,
    tlsPrivateKeyFile,
    authenticationKubeconfig: value('authentication-kubeconfig').trim(),
    authorizationKubeconfig: value('authorization-kubeconfig').trim(),
    alwaysAllowPaths,
  };
}
