// A reconnect that sends no event is found (issue 54): catch-up skips revoked merchants, so probe_revoked
// asks each one's GET /connection once a run (REVOKED_PROBE_CRON, hourly); an active answer is a reconnect,
// taken by the same path as an event naming a new connection. A merchant still revoked costs one call a run.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { createHarness, type Harness } from "../support/worker-harness.ts";

let h: Harness;
const MERCHANT = "mer_demo_2";

beforeAll(async () => {
  h = await createHarness();
  // The probe's cron never fires here: each run is a job the test adds, as the cron would.
  await h.worker({
    merchantIds: [],
    catchup: { client: h.client, cron: "0 0 1 1 *" },
    revokedProbeCron: "0 0 1 1 *",
  });
});
afterAll(async () => {
  await h?.close();
});

const merchant = async (id: string) =>
  (
    await h.db.sql<{ status: string; connection_id: string | null }[]>`
      select status, connection_id from sync.merchants where id = ${id}`
  )[0];
/** What a failure needs to name its cause: the merchant's row, what GET /connection was asked, the feed. */
async function connectionStory(): Promise<string> {
  const [row] = await h.db.sql`
    select status, connection_id, confirm_error, revoked_at from sync.merchants where id = ${MERCHANT}`;
  const feed = await h.db.sql`
    select position, resource, resource_id, status, previous_status, source, event_id from replica.changes
    where merchant_id = ${MERCHANT} and resource in ('merchant', 'connection') order by position`;
  const jobs = await h.db.sql`
    select t.identifier, j.attempts, j.last_error from graphile_worker._private_jobs j
    join graphile_worker._private_tasks t on t.id = j.task_id`;
  return JSON.stringify({
    merchant: row,
    connectionCalls: h.calls("GET /connection"),
    feed,
    jobs,
  });
}

/** One run of probe_revoked, as REVOKED_PROBE_CRON adds it, until graphile-worker has finished it. */
async function probeOnce(): Promise<void> {
  await h.db.sql`select graphile_worker.add_job('probe_revoked', '{}'::json, job_key => 'probe_revoked')`;
  await waitFor(
    async () =>
      (
        await h.db.sql`select 1 from graphile_worker._private_jobs j
                      join graphile_worker._private_tasks t on t.id = j.task_id
                      where t.identifier = 'probe_revoked'`
      ).length === 0,
    { timeoutMs: 30_000, what: "the probe run finished" },
  );
}

describe("probe_revoked", () => {
  it("costs a still-revoked merchant one GET /connection a run, and changes nothing", {
    timeout: 120_000,
  }, async () => {
    h.sandbox.createOrder({ merchantId: MERCHANT });
    await h.ingest((e) => e.merchant_id === MERCHANT);
    await waitFor(async () => (await merchant(MERCHANT))?.status === "active", { what: "confirmed" });
    h.sandbox.revokeMerchant(MERCHANT);
    await h.ingest((e) => e.merchant_id === MERCHANT && e.type === "connection.revoked");
    await waitFor(async () => (await merchant(MERCHANT))?.status === "revoked", { what: "revoked" });
    h.sandbox.resetStats();
    await probeOnce();
    expect(h.calls("GET /connection")).toBe(1);
    expect((await merchant(MERCHANT))?.status).toBe("revoked");
    // Scheduled by graphile-worker's cron, so several workers add one run a tick between them.
    expect(
      await h.db.sql`select identifier from graphile_worker._private_known_crontabs
                     where identifier = 'probe_revoked'`,
    ).toHaveLength(1);
  });

  it("finds a reconnect no event told of: active again, its new connection mirrored, caught up", {
    timeout: 120_000,
  }, async () => {
    const [old] = await h.db.sql<{ id: string }[]>`
      select id from replica.connections where merchant_id = ${MERCHANT}`;
    // The merchant's first catch-up (before it was revoked) ended ok: the reconnect's must end after it.
    const [cursor] = await h.db.sql<{ at: Date | null }[]>`
      select last_run_finished_at as at from sync.cursors where merchant_id = ${MERCHANT}`;
    h.sandbox.reconnectMerchant(MERCHANT);
    // Nothing is ingested: the reconnect sent no event the receiver saw.
    await probeOnce();
    await waitFor(async () => (await merchant(MERCHANT))?.status === "active", {
      what: "active again",
    }).catch(async (error) => {
      throw new Error(`${(error as Error).message}; ${await connectionStory()}`);
    });
    const state = await merchant(MERCHANT);
    expect(state?.connection_id).not.toBe(old!.id);
    await waitFor(
      async () =>
        (
          await h.db.sql`select 1 from replica.connections
                         where id = ${state!.connection_id} and status = 'active'`
        ).length === 1,
      { timeoutMs: 30_000, what: "the new connection mirrored" },
    );
    await waitFor(
      async () =>
        (
          await h.db.sql`
            select 1 from sync.cursors
            where merchant_id = ${MERCHANT} and last_run_status = 'ok'
              and last_run_finished_at > ${cursor?.at ?? new Date(0)}`
        ).length === 1,
      { timeoutMs: 30_000, what: "a catch-up run of the reconnected merchant" },
    );
  });
});
