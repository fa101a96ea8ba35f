export { SandboxClock, type SandboxClockOptions } from "./clock.ts";
export { createSandboxCommand, describeStartup } from "./command.ts";
export { EVENT_RETENTION_MS, matchesTypes } from "./domain/event-log.ts";
export { MAX_GENERATED_MERCHANTS, manyMerchantsSeed } from "./domain/many-merchants-seed.ts";
export { computeTotals, VAT_RATE } from "./domain/order-factory.ts";
export type * from "./domain/resources.ts";
export {
  ALL_SCOPES,
  DEFAULT_SANDBOX_CREDENTIALS,
  DEFAULT_WEBHOOK_SECRET,
  defaultSeed,
  loadSeedFile,
  parseSeed,
  type SandboxSeed,
  type SandboxSeedInput,
} from "./domain/seed.ts";
export type { CreateOrderInput, OrderPatch } from "./domain/world.ts";
export { type Faults, NO_FAULTS } from "./faults.ts";
export type { GeneratorOptions } from "./generator.ts";
export { TOKEN_LIFETIME_SECONDS } from "./http/tokens.ts";
export { ProblemError } from "./problem.ts";
export { type Sandbox, type SandboxOptions, startSandbox } from "./sandbox.ts";
export type { SandboxStatsSnapshot } from "./stats.ts";
export type { Delivery, DeliveryAttempt } from "./webhooks/delivery.ts";
export type { WebhookEndpoint, WebhookEndpointInput } from "./webhooks/endpoints.ts";
export {
  DEFAULT_REPLY_TIMEOUT_MS,
  DISABLE_AFTER_FAILING_MS,
  RETRY_SCHEDULE_MS,
} from "./webhooks/retry-schedule.ts";
