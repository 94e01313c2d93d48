/**
 * Least privilege, from the apiserver's audit log: what the chart's ServiceAccount did, against
 * what the chart grants it (its ClusterRoles and Roles, and system:auth-delegator's two creates).
 */
import * as fs from 'node:fs';

type Obj = Record<string, unknown>;

export interface Access {
  /** e.g. 'patch' */
  verb: string;
  /** 'nodes/status', 'leases', or a non-resource URL such as '/metrics'. */
  resource: string;
  apiGroup: string;
  namespace: string;
  name: string;
  code: number;
  /** The token's ID (its JTI), which tells apart pods sharing one ServiceAccount. */
  credentialId: string;
  /** Milliseconds since the epoch at which the response completed. */
  time: number;
}

export interface Rule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
  verbs: string[];
}

export interface Grant {
  /** 'ClusterRole/x', 'Role/kube-system/x' */
  role: string;
  /** Namespace the grant is limited to (a Role), or '' (a ClusterRole). */
  namespace: string;
  rule: Rule;
}

export function accesses(auditLog: string, username: string): Access[] {
  const out: Access[] = [];
  for (const line of fs.readFileSync(auditLog, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const e = JSON.parse(line) as {
      stage: string;
      verb: string;
      requestURI: string;
      user: { username: string; extra?: Record<string, string[]> };
      stageTimestamp: string;
      objectRef?: {
        resource?: string;
        subresource?: string;
        apiGroup?: string;
        namespace?: string;
        name?: string;
      };
      responseStatus?: { code?: number };
    };
    if (e.stage !== 'ResponseComplete' || e.user.username !== username) continue;
    const ref = e.objectRef;
    out.push({
      verb: e.verb,
      resource:
        ref?.resource === undefined
          ? e.requestURI.split('?')[0]!
          : ref.subresource === undefined
            ? ref.resource
            : `${ref.resource}/${ref.subresource}`,
      apiGroup: ref?.apiGroup ?? '',
      namespace: ref?.namespace ?? '',
      name: ref?.name ?? '',
      code: e.responseStatus?.code ?? 0,
      credentialId: (e.user.extra?.['authentication.kubernetes.io/credential-id']?.[0] ?? '').replace(
        /^JTI=/,
        '',
      ),
      time: Date.parse(e.stageTimestamp),
    });
  }
  return out;
}

/** The rules the chart's RBAC objects give `sa` (namespace/name), plus the built-in roles they bind. */
export function grants(
  objects: Obj[],
  sa: { namespace: string; name: string },
  builtin: Record<string, Rule[]>,
): Grant[] {
  const roles = new Map<string, Rule[]>();
  for (const o of objects) {
    const md = o['metadata'] as { name: string; namespace?: string };
    if (o['kind'] === 'ClusterRole') roles.set(`ClusterRole/${md.name}`, o['rules'] as Rule[]);
    if (o['kind'] === 'Role') roles.set(`Role/${md.namespace}/${md.name}`, o['rules'] as Rule[]);
  }
  for (const [name, rules] of Object.entries(builtin)) roles.set(`ClusterRole/${name}`, rules);
  const out: Grant[] = [];
  for (const o of objects) {
    if (o['kind'] !== 'ClusterRoleBinding' && o['kind'] !== 'RoleBinding') continue;
    const md = o['metadata'] as { namespace?: string };
    const subjects = (o['subjects'] ?? []) as { kind: string; name: string; namespace?: string }[];
    if (
      !subjects.some((s) => s.kind === 'ServiceAccount' && s.name === sa.name && s.namespace === sa.namespace)
    )
      continue;
    const ref = o['roleRef'] as { kind: string; name: string };
    const key = ref.kind === 'Role' ? `Role/${md.namespace}/${ref.name}` : `ClusterRole/${ref.name}`;
    const namespace = o['kind'] === 'RoleBinding' ? (md.namespace ?? '') : '';
    for (const rule of roles.get(key) ?? []) out.push({ role: key, namespace, rule });
  }
  return out;
}

export function allows(g: Grant, a: Access): boolean {
  const r = g.rule;
  if (!r.verbs.includes(a.verb) && !r.verbs.includes('*')) return false;
  if (a.resource.startsWith('/')) return (r.nonResourceURLs ?? []).includes(a.resource);
  if (g.namespace !== '' && g.namespace !== a.namespace) return false;
  if (!(r.apiGroups ?? []).includes(a.apiGroup)) return false;
  if (!(r.resources ?? []).includes(a.resource)) return false;
  return r.resourceNames === undefined || r.resourceNames.includes(a.name);
}

/** Every (grant rule, verb, resource) the grants give, as 'Role: verb group/resource[names]'. */
export function grantedPermissions(
  gs: Grant[],
): { key: string; grant: Grant; verb: string; resource: string }[] {
  const out: { key: string; grant: Grant; verb: string; resource: string }[] = [];
  for (const g of gs) {
    const resources = g.rule.nonResourceURLs ?? g.rule.resources ?? [];
    for (const verb of g.rule.verbs) {
      for (const resource of resources) {
        const names = g.rule.resourceNames === undefined ? '' : `[${g.rule.resourceNames.join(',')}]`;
        const group =
          g.rule.nonResourceURLs === undefined ? `${(g.rule.apiGroups ?? []).join(',') || 'core'}/` : '';
        out.push({ key: `${g.role}: ${verb} ${group}${resource}${names}`, grant: g, verb, resource });
      }
    }
  }
  return out;
}

/** Does some access of the log use this permission? */
export function used(p: { grant: Grant; verb: string; resource: string }, log: Access[]): boolean {
  return log.some(
    (a) =>
      a.verb === p.verb &&
      a.resource === p.resource &&
      a.code < 400 &&
      allows({ ...p.grant, rule: { ...p.grant.rule, verbs: [p.verb] } }, a),
  );
}
