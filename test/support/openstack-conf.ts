// The account the openstack tests authenticate with and the [Global] section of the cloud.conf
// openstack-cloud-controller-manager reads, shared by the plug-in, daemon and handover tests.
import type { KeystoneAccount } from './keystone.ts';

/** The stand-in's account; with the real Keystone, the one Keystone made (Keystone.provision). */
export type Credentials = KeystoneAccount;

export const CREDENTIALS: Credentials = {
  username: 'k8s-routes',
  password: 'pa ss;#"word',
  domain: 'Default',
  projectId: 'p-k8s',
  appCredentialId: 'ac-4711',
  appCredentialSecret: 'app-secret',
};

/**
 * cloud.conf's [Global] section as openstack-cloud-controller-manager reads it: password auth as
 * `c` (the password quoted, `"` and `\` escaped), region RegionOne; a blank line ends it.
 */
export function globalSection(authUrl: string, c: Credentials = CREDENTIALS): string {
  return [
    '[Global]',
    `auth-url = ${authUrl}`,
    `username = ${c.username}`,
    `password = "${c.password.replace(/["\\]/g, (m) => `\\${m}`)}"`,
    `user-domain-name = ${c.domain}`,
    `tenant-id = ${c.projectId}`,
    'region = RegionOne',
    '',
  ].join('\n');
}
