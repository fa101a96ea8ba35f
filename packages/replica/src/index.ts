export { applyBrands, type BrandInput } from "./apply-brands.ts";
export { applyJob, type JobInput } from "./apply-job.ts";
export { applyMenuIfNewer } from "./apply-menu-if-newer.ts";
export {
  type ApplyOrderResult,
  applyOrderIfNewer,
  applyOrdersIfNewer,
  inTransaction,
  type OrderProvenance,
} from "./apply-orders-if-newer.ts";
export {
  applyStatusFromEvents,
  chains,
  type StatusChain,
  type StatusStep,
} from "./apply-status-from-events.ts";
export {
  classifyUpstreamFailure,
  EXTRA_RESOURCES,
  type ExtraResource,
  extraResourceOf,
  type PauseCause,
  type UpstreamFailure,
} from "./classify-upstream-failure.ts";
export { DEFAULT_MAX_ATTEMPTS, enqueueJob, type JobSpec, rescheduleJob } from "./enqueue-job.ts";
export type { MenuInput } from "./menu-input.ts";
export {
  MERCHANT_FLAG_PREFIX,
  type MerchantState,
  merchantFlag,
  merchantStatus,
  pausedMerchantFlags,
  pauseMerchant,
  type Revocation,
  readMerchantState,
  revocationIsStale,
  revokeMerchant,
  revokeMerchantAndRecord,
} from "./merchant-state.ts";
export type { MirrorChange } from "./mirror-change.ts";
export { checkOrder, invalidOrder, type OrderInput } from "./order-input.ts";
export {
  CHANGES_CHANNEL,
  type ChangeInput,
  type ChangeResource,
  type ChangeSource,
  causedBy,
  orderChanges,
  type ResourceChange,
  recordChanges,
} from "./record-changes.ts";
export {
  clearSetAside,
  DEFAULT_SET_ASIDE_BACKOFF,
  listSetAside,
  type ResourceRefusal,
  type SetAsideBackoff,
  setAsideFor,
  setAsideResource,
} from "./resource-refusals.ts";
export { runInLanes } from "./run-in-lanes.ts";
export {
  countUnfinishedRunOverrun,
  nextCronTick,
  type ScheduledTick,
  type StartTickOptions,
  startScheduledTick,
  tickItemDone,
} from "./scheduled-tick.ts";
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
} from "./upstream-pause.ts";
