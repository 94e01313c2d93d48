// The aws plug-in's --cloud-config: YAML or JSON (JSON is YAML), validated
// field by field so a typo fails at startup instead of at the first route.
import { parseDocument } from 'yaml';
import { AwsIniConfigError, looksLikeIni, parseAwsIniConfig, type AwsIniSettings } from './ini-config.ts';

export interface AwsCloudConfig {
  /** Falls back to AWS_REGION, then AWS_DEFAULT_REGION, then the SDK's profile chain. */
  region?: string;
  /** Pins the route table; otherwise it is found by the cluster tag. */
  routeTableId?: string;
  /** Narrows the table lookup (by tag or by ID) to one VPC. */
  vpcId?: string;
  /** EC2 endpoint URL, e.g. a VPC interface endpoint or a local emulator. */
  endpoint?: string;
  /** Turn off the instance's source/destination check on create; default true. */
  disableSrcDstCheck?: boolean;
  /** R118: the route table's route limit; unset: Service Quotas' "Routes per route table", else 50. */
  routeTableLimit?: number;
  /**
   * Set when the file is cloud-provider-aws's INI (R121): its route-relevant settings,
   * honoured as that CCM does (region, table and cluster ID resolved at start).
   */
  ini?: AwsIniSettings;
}

export class AwsConfigError extends Error {
  override readonly name: string = 'AwsConfigError';
}

const FIELDS = [
  'region',
  'routeTableId',
  'vpcId',
  'endpoint',
  'disableSrcDstCheck',
  'routeTableLimit',
] as const;
type Field = (typeof FIELDS)[number];

const PATTERNS: Partial<Record<Field, { re: RegExp; example: string }>> = {
  region: { re: /^[a-z]{2}(-[a-z0-9]+)+-\d+$/, example: 'us-east-1' },
  routeTableId: { re: /^rtb-[0-9a-f]{8,}$/, example: 'rtb-0123456789abcdef0' },
  vpcId: { re: /^vpc-[0-9a-f]{8,}$/, example: 'vpc-0123456789abcdef0' },
};

function fail(msg: string): never {
  throw new AwsConfigError(`aws cloud config: ${msg}`);
}

function stringField(field: Field, value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') {
    fail(`field "${field}" must be a non-empty string, got ${JSON.stringify(value)}`);
  }
  const pattern = PATTERNS[field];
  if (pattern && !pattern.re.test(value)) {
    fail(`field "${field}" is not valid: ${JSON.stringify(value)} (expected e.g. ${pattern.example})`);
  }
  return value;
}

function endpointField(value: unknown): string {
  const text = stringField('endpoint', value);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    fail(`field "endpoint" is not a URL: ${JSON.stringify(text)}`);
  }
  // Credentials in the URL would end up in logs and error messages (this one's included).
  if (url.username !== '' || url.password !== '') fail('field "endpoint" must not contain credentials');
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    fail(`field "endpoint" must be an http or https URL, got ${JSON.stringify(text)}`);
  }
  return text;
}

/**
 * Parses and validates the cloud config text: cloud-provider-aws's INI file (R121), or this
 * plug-in's YAML/JSON (kept for existing users); empty text means all defaults.
 */
export function parseAwsCloudConfig(text: string): AwsCloudConfig {
  if (looksLikeIni(text)) {
    let ini: AwsIniSettings;
    try {
      ini = parseAwsIniConfig(text);
    } catch (err) {
      if (err instanceof AwsIniConfigError) fail(err.message);
      throw err;
    }
    // The source/destination check is always turned off on create, as upstream's CreateRoute does.
    return { disableSrcDstCheck: true, ...(ini.routeTableId ? { routeTableId: ini.routeTableId } : {}), ini };
  }
  const doc = parseDocument(text, { prettyErrors: true });
  const firstError = doc.errors[0];
  if (firstError) fail(`not valid YAML or JSON: ${firstError.message}`);
  const raw: unknown = doc.toJS();
  if (raw === null || raw === undefined) return { disableSrcDstCheck: true };
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    fail(
      `expected a mapping of fields (${FIELDS.join(', ')}), got ${Array.isArray(raw) ? 'a list' : typeof raw}`,
    );
  }
  const obj = raw as Record<string, unknown>;
  for (const key of Object.keys(obj)) {
    if (!(FIELDS as readonly string[]).includes(key)) {
      fail(`unknown field "${key}"; known fields: ${FIELDS.join(', ')}`);
    }
  }
  const config: AwsCloudConfig = { disableSrcDstCheck: true };
  if (obj.region !== undefined) config.region = stringField('region', obj.region);
  if (obj.routeTableId !== undefined) config.routeTableId = stringField('routeTableId', obj.routeTableId);
  if (obj.vpcId !== undefined) config.vpcId = stringField('vpcId', obj.vpcId);
  if (obj.endpoint !== undefined) config.endpoint = endpointField(obj.endpoint);
  if (obj.routeTableLimit !== undefined) {
    const n = obj.routeTableLimit;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) {
      fail(`field "routeTableLimit" must be a whole number of at least 1, got ${JSON.stringify(n)}`);
    }
    config.routeTableLimit = n;
  }
  if (obj.disableSrcDstCheck !== undefined) {
    if (typeof obj.disableSrcDstCheck !== 'boolean') {
      fail(`field "disableSrcDstCheck" must be true or false, got ${JSON.stringify(obj.disableSrcDstCheck)}`);
    }
    config.disableSrcDstCheck = obj.disableSrcDstCheck;
  }
  return config;
}

/**
 * The region from the config or the environment. The SDK itself reads only
 * AWS_REGION; AWS_DEFAULT_REGION is the CLI's name, which operators also set.
 */
export function configuredRegion(
  config: AwsCloudConfig,
  env: Readonly<Record<string, string | undefined>> = process.env,
): string | undefined {
  return config.region ?? (env.AWS_REGION || undefined) ?? (env.AWS_DEFAULT_REGION || undefined);
}
