import type { Logger } from "@loops-sync/config";
import {
  type ChangeSource,
  causedBy,
  type ResourceChange,
  recordChanges,
  type Sql,
  type TransactionSql,
} from "@loops-sync/db";
import type { CallOptions, SyncApi } from "@loops-sync/loops-client";
import {
  applyBrands,
  applyJob,
  applyMenuIfNewer,
  type BrandInput,
  type JobInput,
  revokeMerchant,
} from "@loops-sync/replica";
import { readConnection, readMerchant } from "../merchants/read-merchant.ts";
import { upsertConnection, upsertMerchant } from "../merchants/upsert-merchant.ts";
import { invalidResponse, readMenu } from "../mirror/read-menu.ts";
import { listMerchantLocations } from "../mirror/refresh-locations-task.ts";
import { replaceMerchantLocations } from "../mirror/upsert-locations.ts";
import { openSetAsideGate } from "../upstream/set-aside-gate.ts";
import { countingApi } from "./counting-api.ts";

/** Upper bound on pages of GET /brands, so a misbehaving cursor cannot loop forever. */
const MAX_PAGES = 1000;
/** Jobs read per run at most; the rest wait for the next one. */
const MAX_JOBS = 100;

export interface MerchantReconcile {
  merchantId: string;
  /** Requests made to Loops for this merchant. */
  apiCalls: number;
  /** The merchant's connection read as revoked: it was marked revoked and nothing else was read. */
  revoked: boolean;
  /** What was written because upstream differed (an equal read writes none), as the change feed has it. */
  changes: ResourceChange[];
  /** Extra resources not read: set aside because Loops refused their scope (sync.resource_refusals). */
  setAside: string[];
}

export interface ReconcileOptions extends CallOptions {
  /** How the change feed names these changes. Default: "reconcile". */
  source?: ChangeSource;
  /** Read set-aside resources now, whatever their retry_at (`loops-sync refresh`). Default: false. */
  retrySetAside?: boolean;
  logger?: Logger | undefined;
}

/**
 * Brings every mirrored resource of one merchant to the upstream's state: the merchant and its connection,
 * its locations and their channel connections (replaced from a complete listing), its brands and each brand's
 * menu, the jobs still in progress here, and our own jobs (announced by an ignored job.completed) not mirrored
 * yet. Each write is gated (version, updated_at or lifecycle) so a read
 * equal to the mirror writes nothing. Calls: 2 + L/100 + L + B/100 + B + J (L locations, B brands, J jobs
 * in progress or ours not yet mirrored, at most 100; pages of 100 rounded up). An extra resource (the
 * merchant, locations, brands, menus, jobs) whose scope Loops refuses is set aside and skipped
 * (upstream/set-aside-gate.ts), and the run goes on: only the hot path's refusals (the connection) end it.
 */
export async function reconcileMerchant(
  sql: Sql,
  client: SyncApi,
  merchantId: string,
  { source = "reconcile", retrySetAside = false, logger, ...options }: ReconcileOptions = {},
): Promise<MerchantReconcile> {
  const { api, calls } = countingApi(client.forMerchant(merchantId));
  const gate = await openSetAsideGate(sql, merchantId, { logger, retryNow: retrySetAside });
  const done = (revoked: boolean) => ({
    merchantId,
    apiCalls: calls(),
    revoked,
    changes,
    setAside: gate.setAside(),
  });
  const changes: ResourceChange[] = [];
  // One transaction per resource read, each ending with its feed rows.
  const write = (work: (tx: TransactionSql) => Promise<ResourceChange[]>) =>
    sql.begin(async (tx) => {
      const written = await work(tx);
      await recordChanges(tx, causedBy(written, null, source));
      changes.push(...written);
    });

  const merchant = await gate.read("merchant", () => readMerchant(api, options));
  const connection = await readConnection(api, options);
  const revoked = connection.status === "revoked";
  await write(async (tx) => {
    const written = [
      ...(merchant ? await upsertMerchant(tx, merchant) : []),
      ...(await upsertConnection(tx, connection)),
    ];
    if (revoked) {
      const revocation = await revokeMerchant(tx, merchantId, { connectionId: connection.id, source });
      written.push(...revocation.changes);
    }
    return written;
  });
  if (revoked) return done(true);

  // The database's clock before listing: a go-live that listed later wins (replaceMerchantLocations).
  const [{ now: listedAt } = { now: new Date() }] = await sql<{ now: Date }[]>`select now()`;
  const listing = await gate.read("locations", () => listMerchantLocations(api, options));
  if (listing) await write((tx) => replaceMerchantLocations(tx, merchantId, { ...listing, listedAt }));

  const brands = await gate.read("brands", async () => {
    const read: BrandInput[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await api.brands.list({ limit: 100, ...(cursor ? { cursor } : {}) }, options);
      for (const [i, brand] of result.data.entries()) {
        if (typeof (brand as { id?: unknown } | null)?.id !== "string")
          throw invalidResponse(`brands[${i}] has no id`);
        read.push(brand as BrandInput);
      }
      if (!result.next_cursor) break;
      cursor = result.next_cursor;
    }
    return read;
  });
  if (brands) await write((tx) => applyBrands(tx, merchantId, brands));
  for (const brand of brands ?? []) {
    const menu = await gate.read("menus", () => readMenu(api, brand.id, options));
    if (menu) await write(async (tx) => [await applyMenuIfNewer(tx, merchantId, menu)].filter((c) => !!c));
  }

  // Jobs cannot be listed. Read: the ones this mirror holds unfinished, and our own (their job.completed was
  // stored as ignored_self, so nothing fetched them) not mirrored yet; each finished job is read once.
  const open = await sql<{ id: string }[]>`
    select id from replica.jobs where merchant_id = ${merchantId} and status in ('pending', 'running')
    union
    select ref.id from sync.events e
    cross join lateral (
      select coalesce(e.payload #>> '{data,job_id}', e.payload #>> '{data,job,id}', e.payload #>> '{data,id}') as id
    ) ref
    where e.merchant_id = ${merchantId} and e.type = 'job.completed' and e.outcome = 'ignored_self'
      and ref.id is not null and not exists (select 1 from replica.jobs j where j.id = ref.id)
    order by id
    limit ${MAX_JOBS}`;
  for (const { id } of open) {
    const read = await gate.read("jobs", async () => ({ job: await api.jobs.get(id, options) }));
    if (!read) break;
    const job = read.job as Partial<JobInput> | null;
    if (job?.id !== id || typeof job.type !== "string" || typeof job.status !== "string") {
      throw invalidResponse(`GET /jobs/${id} answered a body without a matching id, type and status`);
    }
    await write(async (tx) => [await applyJob(tx, merchantId, job as JobInput)].filter((c) => !!c));
  }
  return done(false);
}
