// The RBAC rules granted to the controller's ServiceAccount, read from
// deploy/base/rbac.yaml (with the comment above each rule as its reason) and,
// for comparison, from the Helm chart's template (not valid YAML before
// rendering, so read line by line: its rules are written in the same flow style).
import { parseAllDocuments, isMap, isSeq } from 'yaml';

export interface RbacRule {
  /** ClusterRole or Role (a Role lives in the Lease's namespace). */
  readonly kind: string;
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  readonly resourceNames: readonly string[];
  readonly why: string;
}

/** The ServiceAccount's own Roles: the ones named like it (the metrics-reader is for scrapers). */
const OWN_ROLE = 'cloud-route-controller';

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

export function rbacRules(yamlText: string): RbacRule[] {
  const out: RbacRule[] = [];
  for (const doc of parseAllDocuments(yamlText)) {
    const kind = String(doc.get('kind'));
    if ((kind !== 'ClusterRole' && kind !== 'Role') || doc.getIn(['metadata', 'name']) !== OWN_ROLE) continue;
    const rules = doc.get('rules');
    if (!isSeq(rules)) continue;
    rules.items.forEach((item, i) => {
      if (!isMap(item)) return;
      // The yaml parser keeps the first item's comment on the sequence.
      const comment = item.commentBefore ?? (i === 0 ? rules.commentBefore : undefined);
      const r = item.toJSON() as Record<string, unknown>;
      out.push({
        kind,
        apiGroups: strings(r['apiGroups']),
        resources: strings(r['resources']),
        verbs: strings(r['verbs']),
        resourceNames: strings(r['resourceNames']),
        why: (comment ?? '').replace(/\s*\n\s*/g, ' ').trim(),
      });
    });
  }
  return out;
}

/** A rule as `Kind apiGroups resources verbs [named]`, the same for the chart and deploy/. */
export function ruleKey(
  r: Pick<RbacRule, 'kind' | 'apiGroups' | 'resources' | 'verbs' | 'resourceNames'>,
): string {
  const named = r.resourceNames.length > 0 ? ' named' : '';
  return `${r.kind} [${r.apiGroups.join(',')}] [${r.resources.join(',')}] [${r.verbs.join(',')}]${named}`;
}

const flow = (line: string, key: string): string[] | undefined => {
  const m = new RegExp(`^\\s*(?:- )?${key}: \\[(.*)\\]\\s*$`).exec(line);
  if (m === null) return undefined;
  return m[1]!
    .split(',')
    .map((s) => s.trim().replace(/^['"]|['"]$/g, ''))
    .filter((s) => s !== '' || m[1]!.includes("''"));
};

/** The rules of the chart's ClusterRole and Role that the ServiceAccount is bound to (not the metrics reader). */
export function chartRules(template: string): string[] {
  const out: string[] = [];
  for (const doc of template.split(/^---$/m)) {
    const kind = /^kind: (ClusterRole|Role)\s*$/m.exec(doc)?.[1];
    if (kind === undefined || !/^\s+name: \{\{ include "crc.fullname" \. \}\}\s*$/m.test(doc)) continue;
    let rule:
      { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames: string[] } | undefined;
    const flush = (): void => {
      if (rule !== undefined) out.push(ruleKey({ kind, ...rule }));
    };
    for (const line of doc.split('\n')) {
      const groups = flow(line, 'apiGroups');
      if (groups !== undefined) {
        flush();
        rule = { apiGroups: groups, resources: [], verbs: [], resourceNames: [] };
        continue;
      }
      if (rule === undefined) continue;
      if (/^\s*resourceNames:/.test(line)) rule.resourceNames = ['(templated)'];
      rule.resources = flow(line, 'resources') ?? rule.resources;
      rule.verbs = flow(line, 'verbs') ?? rule.verbs;
    }
    flush();
  }
  return out;
}
