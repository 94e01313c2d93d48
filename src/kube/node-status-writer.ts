// R31–R32: NetworkUnavailable is written as a strategic merge patch to
// nodes/<name>/status. Strategic merge (not JSON merge) because
// status.conditions merges by `type`: a JSON merge patch would replace the
// whole list and wipe the kubelet's Ready condition.
import type { NodeRef, NodeStatusWriter } from '../core/ports.ts';
import type { NodeCondition } from '../core/types.ts';
import type { KubeClient } from './kube-client.ts';

export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';

/** metav1.Time wire format: RFC 3339 with second precision, as the apiserver itself writes. */
export function rfc3339(t: Date | string | undefined): string | undefined {
  if (t === undefined) return undefined;
  if (typeof t === 'string') return t;
  return t.toISOString().replace(/\.\d+Z$/, 'Z');
}

/** The exact patch body of R31. */
export function conditionPatch(condition: NodeCondition): { status: { conditions: object[] } } {
  const c: Record<string, string> = { type: condition.type, status: condition.status };
  if (condition.reason !== undefined) c['reason'] = condition.reason;
  if (condition.message !== undefined) c['message'] = condition.message;
  const tt = rfc3339(condition.lastTransitionTime);
  if (tt !== undefined) c['lastTransitionTime'] = tt;
  const ht = rfc3339(condition.lastHeartbeatTime);
  if (ht !== undefined) c['lastHeartbeatTime'] = ht;
  return { status: { conditions: [c] } };
}

/**
 * Errors are KubeApiError (an ApiStatusError carrying the HTTP status), so
 * the controller retries 409 and ignores 404 (R32); transport failures are
 * KubeRequestError and count as other errors.
 */
export class KubeNodeStatusWriter implements NodeStatusWriter {
  private readonly client: Pick<KubeClient, 'request'>;

  constructor(client: Pick<KubeClient, 'request'>) {
    this.client = client;
  }

  async patchNodeCondition(node: NodeRef, condition: NodeCondition, signal: AbortSignal): Promise<void> {
    await this.client.request(`/api/v1/nodes/${encodeURIComponent(node.name)}/status`, {
      method: 'PATCH',
      body: conditionPatch(condition),
      contentType: STRATEGIC_MERGE_PATCH,
      signal,
    });
  }
}
