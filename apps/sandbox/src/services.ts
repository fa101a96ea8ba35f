import type { SandboxClock } from "./clock.ts";
import type { EventLog } from "./domain/event-log.ts";
import type { JobRunner } from "./domain/job-runner.ts";
import type { ProfileReviewer } from "./domain/profile-review.ts";
import type { SandboxStore } from "./domain/store.ts";
import type { SandboxWorld } from "./domain/world.ts";
import type { FaultInjector } from "./faults.ts";
import type { OrderGenerator } from "./generator.ts";
import type { IdempotencyStore } from "./http/idempotency.ts";
import type { TokenStore } from "./http/tokens.ts";
import type { IdFactory } from "./ids.ts";
import type { SandboxStats } from "./stats.ts";
import type { WebhookDispatcher } from "./webhooks/dispatcher.ts";

/** The parts of one running sandbox, handed to every route module. */
export interface SandboxServices {
  store: SandboxStore;
  log: EventLog;
  clock: SandboxClock;
  ids: IdFactory;
  world: SandboxWorld;
  faults: FaultInjector;
  stats: SandboxStats;
  dispatcher: WebhookDispatcher;
  tokens: TokenStore;
  generator: OrderGenerator;
  idempotency: IdempotencyStore;
  jobs: JobRunner;
  reviewer: ProfileReviewer;
}
