export { inTransaction } from "./in-transaction.ts";
export { DEFAULT_MAX_ATTEMPTS, enqueueJob, type JobSpec, rescheduleJob } from "./jobs/enqueue-job.ts";
export { recordTrickle, type TrickleState } from "./jobs/record-trickle.ts";
export { runInLanes } from "./jobs/run-in-lanes.ts";
export {
  countUnfinishedRunOverrun,
  nextCronTick,
  type ScheduledTick,
  type StartTickOptions,
  startScheduledTick,
  tickItemDone,
} from "./jobs/scheduled-tick.ts";
export { applyBrands, type BrandInput } from "./menus/apply-brands.ts";
export { applyJob, type JobInput } from "./menus/apply-job.ts";
export { applyMenuIfNewer } from "./menus/apply-menu-if-newer.ts";
export type { MenuInput } from "./menus/menu-input.ts";
export type { MirrorChange } from "./menus/mirror-change.ts";
export {
  MERCHANT_FLAG_PREFIX,
  type MerchantState,
  merchantFlag,
  merchantStatus,
  pausedMerchantFlags,
  type Revocation,
  readMerchantState,
  revocationIsStale,
  revokeMerchant,
  revokeMerchantAndRecord,
  STALE_REFUSAL,
} from "./merchants/merchant-state.ts";
export {
  type ApplyOrderResult,
  applyOrderIfNewer,
  applyOrdersIfNewer,
  type OrderProvenance,
} from "./orders/apply-orders-if-newer.ts";
export {
  applyStatusFromEvents,
  chains,
  type StatusChain,
  type StatusStep,
} from "./orders/apply-status-from-events.ts";
export { orderChanges } from "./orders/order-changes.ts";
export { checkOrder, invalidOrder, type OrderInput } from "./orders/order-input.ts";
export {
  classifyUpstreamFailure,
  EXTRA_RESOURCES,
  type ExtraResource,
  extraResourceOf,
  type PauseCause,
  type UpstreamFailure,
} from "./upstream/classify-upstream-failure.ts";
export {
  clearSetAside,
  DEFAULT_SET_ASIDE_BACKOFF,
  listSetAside,
  type ResourceRefusal,
  type SetAsideBackoff,
  setAsideFor,
  setAsideResource,
} from "./upstream/resource-refusals.ts";
export {
  claimDueProbe,
  DEFAULT_PAUSE_BACKOFF,
  enterPause,
  listPauses,
  type PauseBackoff,
  type PauseScope,
  pauseScopeOf,
  probeAccepted,
  probeRefused,
  type UpstreamPause,
} from "./upstream/upstream-pause.ts";
