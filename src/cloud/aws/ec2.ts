// The aws plug-in's only door to the AWS SDK: the EC2 client and the six
// commands the plug-in sends (lint forbids @aws-sdk/* and @smithy/* imports
// anywhere else in src/). `npm run build` replaces this module's compiled form
// with a bundle of the SDK's ES modules (scripts/bundle-aws.ts), so the shipped
// plug-in loads only these commands' schemas, not the whole EC2 service model.
// The client keeps the SDK's credential chain (environment, shared files, web
// identity / IRSA, instance profile) and its SigV4 signing.
export {
  CreateRouteCommand,
  DeleteRouteCommand,
  DescribeInstancesCommand,
  DescribeRouteTablesCommand,
  EC2Client,
  ModifyInstanceAttributeCommand,
  ReplaceRouteCommand,
} from '@aws-sdk/client-ec2';
import type * as Sts from '@aws-sdk/nested-clients/sts';
export type { EC2ClientConfig, Filter, Route as Ec2Route, RouteTable, Tag } from '@aws-sdk/client-ec2';
// SigV4 for the one Service Quotas request the room reads (room.ts): that service's client
// would bring a second copy of the SDK's core; the signer is the one the EC2 client uses.
export { SignatureV4 } from '@smithy/signature-v4';

/**
 * STS, for a cloud config's RoleARN (R121); loaded only then, like the SDK's own role
 * providers, so a daemon without a role never loads it.
 */
export function loadSts(): Promise<typeof Sts> {
  return import('@aws-sdk/nested-clients/sts');
}
