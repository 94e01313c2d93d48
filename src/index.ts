// Public API of the cloud-route-controller library.
export type {
  CallOptions,
  CloudProvider,
  CloudProviderFactory,
  Node,
  NodeAddress,
  NodeCondition,
  NodeLister,
  OperationResult,
  ReconcileScope,
  Route,
  RoutePlan,
  Routes,
  RouteTableRoom,
} from './core/types.ts';
export {
  AbortError,
  ConflictError,
  PermanentError,
  QuotaExceededError,
  RetryableError,
  RouteError,
  ThrottledError,
  TimeoutError,
  errorKind,
  throwIfAborted,
  type CallOutcome,
  type ErrorKind,
} from './core/errors.ts';
export {
  ApiStatusError,
  MemoryLogger,
  nopLogger,
  noopRecorder,
  type EventRecorder,
  type EventType,
  type Logger,
  type NodeEventHandler,
  type NodeRef,
  type NodeSource,
  type NodeStatusWriter,
} from './core/ports.ts';
export { RealClock, VirtualClock, sleep, type Clock, type TimerHandle } from './core/clock.ts';
export { canonicalCIDR, parseCIDR, type Cidr } from './core/cidr.ts';
export { isResponsibleForRoute } from './core/responsibility.ts';
export { planReconcile, type ReconcilePlan, type PlannedCreate, type PlannedDelete } from './core/plan.ts';
export { nodeUpdateTrigger, type Trigger } from './core/trigger-filter.ts';
export {
  RouteController,
  RouteControllerConfigError,
  type RouteControllerStatus,
} from './controller/route-controller.ts';
export { DEFAULTS, type RouteControllerOptions } from './controller/options.ts';
export type { ReconcileReport } from './controller/reconcile.ts';
export type { RoomView } from './controller/route-table-room.ts';
export { RouteControllerMetrics } from './controller/metrics.ts';
export {
  MemoryRoutes,
  type MemoryRoutesOptions,
  type CallRecord,
  type StoredRoute,
} from './cloud/memory/memory-routes.ts';
export { memoryProviderFactory } from './cloud/memory/factory.ts';
export {
  MemoryCluster,
  type NodeSpecInput,
  type RecordedEvent,
  type RecordedPatch,
} from './cluster/memory-cluster.ts';
export {
  registerCloudProvider,
  registerCloudProviderLoader,
  registeredCloudProviders,
  resolveCloudProvider,
  type CloudProviderLoader,
} from './cloud/registry.ts';
export { registerBuiltinProviders } from './cloud/builtin.ts';
export { seededRandom } from './core/random.ts';
