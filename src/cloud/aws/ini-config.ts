// cloud-provider-aws's cloud config (R121), read as its CCM reads it: gcfg
// (`gcfg.FatalOnly(gcfg.ReadInto(...))`, so unknown sections and keys are extra data and
// ignored), then `ValidateOverrides`. Mirrors k8s.io/cloud-provider-aws v1.37.1
// pkg/providers/v1/config/config.go and aws.go (readAWSCloudConfig, getRegionFromMetadata,
// azToRegion) and tags.go (awsTagging.init).
import { GcfgSyntaxError, parseGcfg } from '../gcfg.ts';

export class AwsIniConfigError extends Error {
  override readonly name: string = 'AwsIniConfigError';
}

/** One `[ServiceOverride "<key>"]` section, its values as upstream keeps them. */
export interface AwsServiceOverride {
  readonly key: string;
  /** Space-trimmed, as ValidateOverrides leaves it. */
  readonly service: string;
  /** Space-trimmed. */
  readonly region: string;
  readonly url: string;
  readonly signingRegion: string;
  readonly signingMethod: string;
  readonly signingName: string;
}

/** What the INI file says that the route controller uses; everything else is ignored. */
export interface AwsIniSettings {
  readonly zone?: string;
  readonly region?: string;
  readonly routeTableId?: string;
  /** Accepted; upstream's route code does not use it (only its load balancer and node code). */
  readonly vpc?: string;
  /** KubernetesClusterID: tag key `kubernetes.io/cluster/<id>`. */
  readonly clusterID?: string;
  /** KubernetesClusterTag: the legacy `KubernetesCluster=<id>` tag; wins over clusterID. */
  readonly legacyClusterTag?: string;
  readonly roleARN?: string;
  readonly sourceARN?: string;
  readonly serviceOverrides: readonly AwsServiceOverride[];
}

/** The [Global] keys the route controller uses, lower-cased as gcfg matches them. */
const GLOBAL_KEYS = {
  zone: 'zone',
  region: 'region',
  routetableid: 'routeTableId',
  vpc: 'vpc',
  kubernetesclusterid: 'clusterID',
  kubernetesclustertag: 'legacyClusterTag',
  rolearn: 'roleARN',
  sourcearn: 'sourceARN',
} as const;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * Whether the text is INI rather than YAML/JSON: its first line that is neither blank nor
 * a comment opens a section. A YAML config is a mapping, so it never starts with `[`.
 */
export function looksLikeIni(text: string): boolean {
  for (const line of text.replace(/^\uFEFF/, '').split(/\r?\n/)) {
    const t = line.trim();
    if (t === '' || t.startsWith('#') || t.startsWith(';')) continue;
    return t.startsWith('[');
  }
  return false;
}

function overrideOf(key: string, values: Map<string, string>): AwsServiceOverride {
  const v = (name: string): string => values.get(name) ?? '';
  return {
    key,
    service: v('service').trim(),
    region: v('region').trim(),
    url: v('url'),
    signingRegion: v('signingregion'),
    signingMethod: v('signingmethod'),
    signingName: v('signingname'),
  };
}

/** upstream CloudConfig.ValidateOverrides, with its messages. */
function validateOverrides(overrides: readonly AwsServiceOverride[]): void {
  const seen = new Set<string>();
  for (const o of overrides) {
    if (o.service === '')
      throw new AwsIniConfigError(`service name is missing [Service is ""] in override ${o.key}`);
    if (o.region === '')
      throw new AwsIniConfigError(`service region is missing [Region is ""] in override ${o.key}`);
    if (o.url.trim() === '') throw new AwsIniConfigError(`url is missing [URL is ""] in override ${o.key}`);
    if (o.signingRegion.trim() === '') {
      throw new AwsIniConfigError(`signingRegion is missing [SigningRegion is ""] in override ${o.key}`);
    }
    const signature = `${o.service}_${o.region}`;
    if (seen.has(signature)) {
      throw new AwsIniConfigError(
        `duplicate entry found for service override [${o.key}] (${o.service} in ${o.region})`,
      );
    }
    seen.add(signature);
  }
}

/** Parses cloud-provider-aws's INI file; throws AwsIniConfigError with upstream's wording. */
export function parseAwsIniConfig(text: string): AwsIniSettings {
  let sections;
  try {
    sections = parseGcfg(text);
  } catch (err) {
    if (err instanceof GcfgSyntaxError) throw new AwsIniConfigError(err.message);
    throw err;
  }
  const global: Mutable<Omit<AwsIniSettings, 'serviceOverrides'>> = {};
  // gcfg merges repeated sections; a single-valued variable keeps its last value.
  const overrides = new Map<string, Map<string, string>>();
  for (const section of sections) {
    if (section.name === 'global' && section.subsection === undefined) {
      for (const e of section.entries) {
        const field = GLOBAL_KEYS[e.name as keyof typeof GLOBAL_KEYS];
        if (field !== undefined) global[field] = e.value;
      }
    } else if (section.name === 'serviceoverride' && section.subsection !== undefined) {
      const values = overrides.get(section.subsection) ?? new Map<string, string>();
      for (const e of section.entries) values.set(e.name, e.value);
      overrides.set(section.subsection, values);
    }
  }
  // An empty value is Go's zero value: the same as the key being absent.
  for (const k of Object.keys(global) as (keyof typeof global)[]) {
    if (global[k] === '') delete global[k];
  }
  const serviceOverrides = [...overrides].map(([key, values]) => overrideOf(key, values));
  validateOverrides(serviceOverrides);
  if (global.legacyClusterTag && global.clusterID && global.legacyClusterTag !== global.clusterID) {
    throw new AwsIniConfigError(
      `clusterID tags did not match: "${global.clusterID}" vs "${global.legacyClusterTag}"`,
    );
  }
  return { ...global, serviceOverrides };
}

/** upstream azToRegion: the region prefix of an availability zone name. */
export function azToRegion(az: string): string {
  if (az === '') throw new AwsIniConfigError('invalid (empty) AZ');
  const m = /^([a-zA-Z]+-)+\d+/.exec(az);
  if (!m) throw new AwsIniConfigError(`invalid AZ: ${az}`);
  return m[0];
}

/**
 * The EC2 service override for `region`, as upstream's EC2Resolver picks it: Service equal
 * to the Go SDK v2's ServiceID `EC2` (case-sensitive) and Region equal to the client's.
 */
export function ec2Override(
  overrides: readonly AwsServiceOverride[],
  region: string,
): AwsServiceOverride | undefined {
  return overrides.find((o) => o.service === 'EC2' && o.region === region);
}
