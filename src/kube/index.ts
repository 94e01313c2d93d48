// Kubernetes adapters: node informer, status writer, event recorder, client.
// Nothing here loads @kubernetes/client-node unless a kubeconfig needs it.
export { KubeApiError, KubeClient, KubeRequestError, DEFAULT_BURST, DEFAULT_QPS } from './kube-client.ts';
export type { KubeClientOptions, KubeRawResponse, KubeRequestOptions, KubeResponse } from './kube-client.ts';
export { KubeConfigError, createKubeClient, loadKubeConnection } from './kubeconfig.ts';
export type { CreateKubeClientOptions, KubeConnection, LoadKubeConfigOptions } from './kubeconfig.ts';
// loadKubeConfig (a @kubernetes/client-node KubeConfig) lives in ./client-node-config.ts and is
// deliberately not re-exported: importing client-node costs ~80 MB of RSS.
export { NodeInformer } from './node-informer.ts';
export type { NodeInformerOptions, RestartReason } from './node-informer.ts';
export { diffCaches, informerBackoffMs, transformNode } from './node-cache.ts';
export type { BackoffOptions, CacheDelta, CachedNode } from './node-cache.ts';
export { kubeNodeListWatch } from './node-transport.ts';
export type { NodeListPage, NodeListWatch, RawWatchEvent } from './node-transport.ts';
export { ListScanError, ListScanner, scanList } from './list-scanner.ts';
export { KubeNodeStatusWriter, STRATEGIC_MERGE_PATCH, conditionPatch } from './node-status-writer.ts';
export { KubeEventRecorder } from './event-recorder.ts';
export type { KubeEventRecorderOptions } from './event-recorder.ts';
export { EventCorrelator } from './event-correlator.ts';
export type { CoreV1Event, CorrelateResult, EventCorrelatorOptions, EventPatch } from './event-correlator.ts';
export { RequestRateLimiter, TokenBucket } from '../core/rate-limiter.ts';
