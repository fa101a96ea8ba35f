import type { Logger } from "@loops-sync/config";
import {
  causedBy,
  learnCreatedMerchant,
  PROCESS_EVENTS_MAX_ATTEMPTS,
  type ResourceChange,
  recordChanges,
  type Sql,
  type TransactionSql,
} from "@loops-sync/db";
import {
  applyBrands,
  applyJob,
  applyOrdersIfNewer,
  type BrandInput,
  enqueueJob,
  type JobInput,
  orderChanges,
} from "@loops-sync/replica";
import { applyProfileStatus } from "../merchants/apply-profile-status.ts";
import { type MerchantInput, upsertMerchant } from "../merchants/upsert-merchant.ts";
import { applyLocationWrite, type LocationWrite } from "../mirror/apply-location-write.ts";
import { queueFirstCatchup, queueFirstReconcile } from "../reconcile/pace-background.ts";
import { merchantOfWrite } from "./merchant-of-write.ts";

/** A write Loops accepted through the gateway: its route's kind, the request's merchant, the answer. */
export interface GatewayWrite {
  /** merchant_created, merchant, business_profile, document, brand, job, location, order. */
  kind: string;
  merchantId: string | undefined;
  resource: unknown;
}

const hasId = (value: unknown): value is { id: string } =>
  typeof value === "object" && value !== null && typeof (value as { id?: unknown }).id === "string";

/**
 * The gateway's mirror: applies what a write returned with the appliers the reconcile uses, gated the same
 * way, in one transaction with its feed changes (`source` `write`); resolves once committed, with whether
 * anything was mirrored. A job it started is followed (refresh_job until it finishes, then the menu it
 * imported); a merchant it created is learned and synced like one of LOOPS_MERCHANT_IDS (a reconcile and a
 * catch-up at once). A shape it cannot read is left to the reconcile, never a failure of the write.
 */
export function createWriteMirror({ sql, logger }: { sql: Sql; logger?: Logger }) {
  return async function mirrorWrite({ kind, merchantId, resource }: GatewayWrite): Promise<boolean> {
    if (kind === "document" || (!hasId(resource) && kind !== "business_profile")) return false;
    return await sql
      .begin(async (tx) => {
        const changes = await apply(tx, kind, merchantId, resource);
        if (changes === undefined) return false;
        await recordChanges(tx, causedBy(changes, null, "write"));
        return true;
      })
      .catch((error: unknown) => {
        logger?.warn({ kind, error: (error as Error).name }, "gateway write not mirrored");
        throw error;
      });
  };
}

/** The rows a write's answer changes; undefined when nothing of it can be mirrored. */
async function apply(
  tx: TransactionSql,
  kind: string,
  header: string | undefined,
  resource: unknown,
): Promise<ResourceChange[] | undefined> {
  switch (kind) {
    case "merchant_created": {
      const merchant = resource as MerchantInput;
      const changes = await upsertMerchant(tx, merchant);
      const learned = await learnCreatedMerchant(tx, merchant.id);
      if (learned) await syncCreatedMerchant(tx, merchant.id, learned);
      return changes;
    }
    case "merchant":
      return await upsertMerchant(tx, resource as MerchantInput);
    case "location":
      return await applyLocationWrite(tx, resource as LocationWrite);
    case "order":
      return orderChanges(await applyOrdersIfNewer(tx, [resource]), "write");
  }
  const merchantId = await merchantOfWrite(tx, header, resource);
  if (!merchantId) return undefined;
  switch (kind) {
    case "business_profile": {
      const status = (resource as { status?: unknown } | null)?.status;
      return typeof status === "string" ? await applyProfileStatus(tx, merchantId, status) : undefined;
    }
    case "brand":
      return await applyBrands(tx, merchantId, [resource as BrandInput]);
    case "job": {
      const job = resource as JobInput;
      const change = await applyJob(tx, merchantId, job);
      if (job.status === "pending" || job.status === "running") {
        // Followed as a job.completed would have it followed (same key: one refresh, whichever asks first).
        await enqueueJob(tx, {
          task: "refresh_job",
          payload: { merchantId, jobId: job.id },
          merchantId,
          jobKey: `job:${merchantId}:${job.id}`,
          jobKeyMode: "preserve_run_at",
          runAt: new Date(Date.now() + FIRST_LOOK_MS),
        });
      }
      return change ? [change] : [];
    }
    default:
      return undefined;
  }
}

/**
 * A created merchant joins the sync as a configured one does: reconciled and caught up at once. One its own
 * webhook had left unconfirmed gets its waiting events dispatched, as confirm_merchant would have.
 */
async function syncCreatedMerchant(
  tx: TransactionSql,
  merchantId: string,
  learned: "learned" | "confirmed",
): Promise<void> {
  await queueFirstReconcile(tx, merchantId);
  await queueFirstCatchup(tx, merchantId);
  if (learned !== "confirmed") return;
  const pending = await tx<{ id: string }[]>`
    select id from sync.events e
    where merchant_id = ${merchantId} and outcome = 'pending'
      and not exists (select 1 from sync.order_refresh r where r.event_id = e.id)
    order by id`;
  if (pending.length === 0) return;
  await enqueueJob(tx, {
    task: "process_events",
    payload: { eventIds: pending.map((e) => e.id) },
    maxAttempts: PROCESS_EVENTS_MAX_ATTEMPTS,
  });
}

/** A menu job runs for seconds: its first refresh waits this long, graphile-worker's backoff after that. */
const FIRST_LOOK_MS = 1000;
