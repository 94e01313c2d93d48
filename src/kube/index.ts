// Kubernetes adapters: node informer, status writer, event recorder, client.
export { KubeApiError, KubeClient, KubeRequestError, DEFAULT_BURST, DEFAULT_QPS } from './kube-client.ts';
export type { KubeClientOptions, KubeRequestOptions, KubeResponse } from './kube-client.ts';
export { KubeConfigError, createKubeClient, loadKubeConfig } from './kubeconfig.ts';
export type { CreateKubeClientOptions, LoadKubeConfigOptions } from './kubeconfig.ts';
export { NodeInformer } from './node-informer.ts';
export type { NodeInformerOptions, RestartReason } from './node-informer.ts';
export { diffCaches, informerBackoffMs, transformNode } from './node-cache.ts';
export type { BackoffOptions, CacheDelta, CachedNode } from './node-cache.ts';
export { kubeNodeListWatch } from './node-transport.ts';
export type { NodeListPage, NodeListWatch, RawWatchEvent } from './node-transport.ts';
export { KubeNodeStatusWriter, STRATEGIC_MERGE_PATCH, conditionPatch } from './node-status-writer.ts';
export { KubeEventRecorder } from './event-recorder.ts';
export type { KubeEventRecorderOptions } from './event-recorder.ts';
export { EventCorrelator } from './event-correlator.ts';
export type { CoreV1Event, CorrelateResult, EventCorrelatorOptions, EventPatch } from './event-correlator.ts';
export { RequestRateLimiter, TokenBucket } from './rate-limiter.ts';
