import type { Logger } from "@loops-sync/config";
import {
  causedBy,
  learnConfiguredMerchants,
  recordChanges,
  recordMerchantReconciled,
  type Sql,
} from "@loops-sync/db";
import type { SyncApi } from "@loops-sync/loops-client";
import {
  classifyUpstreamFailure,
  readMerchantState,
  revokeMerchantAndRecord,
  STALE_REFUSAL,
} from "@loops-sync/replica";
import { upsertChannels } from "../mirror/upsert-locations.ts";
import { openSetAsideGate } from "../upstream/set-aside-gate.ts";
import { reconcileMerchant } from "./reconcile-merchant.ts";

const RESOURCES = [
  "merchant",
  "connection",
  "location",
  "channel_connection",
  "brand",
  "menu",
  "job",
] as const;

export interface RunReconcileOptions {
  sql: Sql;
  client: SyncApi;
  /** Only this merchant. Default: every active merchant in sync.merchants (and `merchantIds`). */
  merchantId?: string | undefined;
  /** Configured merchants (LOOPS_MERCHANT_IDS), recorded as active first. Default: []. */
  merchantIds?: readonly string[];
  /** Read set-aside resources now, whatever their retry_at (`loops-sync refresh`). Default: false. */
  retrySetAside?: boolean;
  /** Aborts between and during calls (Ctrl-C). */
  signal?: AbortSignal;
  logger?: Logger;
}

export interface MerchantReconcileResult {
  merchantId: string;
  status: "ok" | "revoked" | "failed";
  apiCalls: number;
  /** Rows written because upstream differed, per resource (every resource named, 0 when none). */
  changed: Record<(typeof RESOURCES)[number], number>;
  error: string | undefined;
  /** Loops refused the application itself (the CLI exits 4). */
  refused: boolean;
  /** Extra resources not read: Loops refused their scope (sync.resource_refusals); the run still succeeds. */
  setAside: string[];
}

export interface ReconcileRun {
  merchants: MerchantReconcileResult[];
  /** Every request made, the channel catalog's included. */
  apiCalls: number;
  failed: string[];
}

/** `loops-sync refresh`: the reconcile of every active merchant (or one), then the channel catalog, in turn. */
export async function runReconcile({
  sql,
  client,
  merchantId,
  merchantIds = [],
  retrySetAside = false,
  signal,
  logger,
}: RunReconcileOptions): Promise<ReconcileRun> {
  await learnConfiguredMerchants(sql, merchantIds);
  const ids = merchantId
    ? [merchantId]
    : (await sql<{ id: string }[]>`select id from sync.merchants where status = 'active' order by id`).map(
        (r) => r.id,
      );
  const options = signal ? { signal } : {};
  const merchants: MerchantReconcileResult[] = [];
  let channelsFrom: string | undefined;
  for (const id of ids) {
    signal?.throwIfAborted();
    const changed = Object.fromEntries(RESOURCES.map((r) => [r, 0])) as MerchantReconcileResult["changed"];
    // The connection this run calls under: a 403 answered under it after a reconnect is stale.
    const { connectionId } = await readMerchantState(sql, id);
    try {
      const result = await reconcileMerchant(sql, client, id, { ...options, retrySetAside, logger });
      // It counts as the merchant's run: the worker's trickle schedules the next one from it.
      if (!result.revoked) await recordMerchantReconciled(sql, id, result.apiCalls);
      for (const c of result.changes)
        if (c.resource in changed) changed[c.resource as keyof typeof changed]++;
      merchants.push({
        merchantId: id,
        status: result.revoked ? "revoked" : "ok",
        apiCalls: result.apiCalls,
        changed,
        error: undefined,
        refused: false,
        setAside: result.setAside,
      });
      if (!result.revoked) channelsFrom ??= id;
    } catch (error) {
      if (signal?.aborted) throw error;
      const failure = classifyUpstreamFailure(error);
      const message = error instanceof Error ? error.message : String(error);
      const revoked =
        failure.kind === "revoked" &&
        !(await revokeMerchantAndRecord(sql, id, { source: "reconcile", refusedUnder: connectionId }));
      if (!revoked) logger?.warn({ merchantId: id, error: message }, "reconcile failed for a merchant");
      const stale = failure.kind === "revoked" && !revoked;
      merchants.push({
        merchantId: id,
        status: revoked ? "revoked" : "failed",
        apiCalls: 0,
        changed,
        error: stale ? STALE_REFUSAL : message,
        refused: failure.refused === true,
        setAside: [],
      });
    }
  }
  let apiCalls = merchants.reduce((n, m) => n + m.apiCalls, 0);
  if (channelsFrom) {
    const from = channelsFrom;
    const gate = await openSetAsideGate(sql, from, { logger, retryNow: retrySetAside });
    let called = false;
    const channels = await gate.read("channels", () => {
      called = true;
      return client.forMerchant(from).channels.list(options);
    });
    if (called) apiCalls++;
    const catalog = (channels ?? []).filter(
      (c): c is { id: string } => typeof (c as { id?: unknown })?.id === "string",
    );
    if (channels) {
      await sql.begin(async (tx) => {
        await recordChanges(tx, causedBy(await upsertChannels(tx, catalog), null, "reconcile"));
      });
    }
  }
  return {
    merchants,
    apiCalls,
    failed: merchants.filter((m) => m.status === "failed").map((m) => m.merchantId),
  };
}
