// Merchants come and go, told truly (DESIGN.md "Merchants come and go"): a revocation is a change of the
// merchant's connection row, in the feed; a revoked merchant whose later event names another connection is
// confirmed again and synced by itself; a late revocation of the old connection revokes nothing else; a 403
// connection_not_active revokes the connection row too.

import { type EventEnvelope, storeEventsAndEnqueue } from "@loops-sync/db";
import { readChanges } from "@loops-sync/schema";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { runCli } from "../support/operator-run.ts";
import { APPLICATION_ID, createHarness, type Harness, outcomes } from "../support/worker-harness.ts";

let h: Harness;
const MERCHANT = "mer_demo_2";

beforeEach(async () => {
  h = await createHarness();
  // No merchant configured: each is learned from its events and confirmed with GET /connection. Catch-up
  // runs, so a reconnected merchant's event log is read again.
  await h.worker({ merchantIds: [], catchup: { client: h.client, cron: "0 0 1 1 *" } });
}, 60_000);
afterEach(async () => {
  await h?.close();
});

const merchant = async (id: string) =>
  (
    await h.db.sql<{ status: string; connection_id: string | null }[]>`
      select status, connection_id from sync.merchants where id = ${id}`
  )[0];
const connections = (id: string) =>
  h.db.sql<{ id: string; status: string }[]>`
    select id, status from replica.connections where merchant_id = ${id} order by created_at nulls first, id`;
const connectionChanges = async () =>
  (await readChanges(h.db.sql, { after: 0, limit: 1000 }))
    .filter((c) => c.resource === "connection")
    .map((c) => ({
      id: c.resource_id,
      status: c.status,
      previous: c.previous_status,
      event: c.event_id,
      source: c.source,
    }));
/** No job of the merchant queued or running (a refresh that would meet the revocation first). */
const settledJobs = (id: string) =>
  waitFor(
    async () =>
      (
        await h.db.sql`
          select 1 from graphile_worker._private_jobs
          where payload ->> 'merchantId' = ${id}
            and (locked_at is not null or (attempts < max_attempts and run_at <= now() + interval '5 seconds'))`
      ).length === 0,
    { timeoutMs: 30_000, what: `${id}'s jobs done` },
  );
const mirrored = async (orderId: string) =>
  (await h.db.sql`select 1 from replica.orders where id = ${orderId}`).length === 1;

/** The merchant learned from its first order: confirmed, mirrored, its jobs done. Its connection's id. */
async function connected(): Promise<string> {
  const order = h.sandbox.createOrder({ merchantId: MERCHANT });
  await h.ingest((e) => e.merchant_id === MERCHANT);
  await waitFor(() => mirrored(order.id), { what: "the first order mirrored" });
  const [row] = await connections(MERCHANT);
  await settledJobs(MERCHANT);
  return row!.id;
}

/** Revoked upstream, its connection.revoked delivered and applied. The revocation event's id. */
async function revoked(): Promise<string> {
  h.sandbox.revokeMerchant(MERCHANT);
  const [event] = await h.ingest((e) => e.merchant_id === MERCHANT);
  await waitFor(async () => (await merchant(MERCHANT))?.status === "revoked", { what: "revoked" });
  return event!;
}

/** Connected again upstream, then an order's event (naming the new connection) delivered and settled. */
async function reconnected(): Promise<void> {
  h.sandbox.reconnectMerchant(MERCHANT);
  h.sandbox.resetStats();
  const order = h.sandbox.createOrder({ merchantId: MERCHANT });
  const [orderEvent] = await h.ingest((e) => e.merchant_id === MERCHANT);
  await waitFor(() => mirrored(order.id), { timeoutMs: 30_000, what: "the reconnected merchant's order" });
  // Applied by its own fetch, or stale when catch-up's fetch of the same order came first.
  await waitFor(
    async () => ["applied", "stale"].includes((await outcomes(h.db, [orderEvent!]))[orderEvent!] ?? ""),
    { what: "the reconnected merchant's order event settled" },
  );
  await settledJobs(MERCHANT);
}

// Each case builds the history it needs on a database and sandbox of its own, so any one runs alone.
describe("a merchant that revokes and connects again", () => {
  it("is confirmed and mirrored, its connection named in its state", { timeout: 120_000 }, async () => {
    const connection = await connected();
    expect(await connections(MERCHANT)).toEqual([{ id: connection, status: "active" }]);
    expect(await merchant(MERCHANT)).toEqual({ status: "active", connection_id: connection });
  });

  it("connection.revoked sets the connection row to revoked with the merchant, and the feed says so", {
    timeout: 120_000,
  }, async () => {
    const oldConnection = await connected();
    const revocationEvent = await revoked();
    expect(await connections(MERCHANT)).toEqual([{ id: oldConnection, status: "revoked" }]);
    const [raw] = await h.db.sql<{ status: string }[]>`
      select raw ->> 'status' as status from replica.connections where id = ${oldConnection}`;
    expect(raw?.status).toBe("revoked");
    expect((await connectionChanges()).at(-1)).toEqual({
      id: oldConnection,
      status: "revoked",
      previous: "active",
      event: revocationEvent,
      source: "webhook",
    });
    const [health] = await h.db.sql<{ merchant_status: string; connection_status: string }[]>`
      select merchant_status, connection_status from reporting.sync_health where merchant_id = ${MERCHANT}`;
    expect(health).toEqual({ merchant_status: "revoked", connection_status: "revoked" });
  });

  it("a later event naming a new connection confirms it again: active, mirrored, its events applied, caught up", {
    timeout: 120_000,
  }, async () => {
    const oldConnection = await connected();
    await revoked();
    await reconnected();
    const state = await merchant(MERCHANT);
    expect(state?.status).toBe("active");
    expect(state?.connection_id).not.toBe(oldConnection);
    expect(await connections(MERCHANT)).toEqual([
      { id: oldConnection, status: "revoked" },
      { id: state!.connection_id, status: "active" },
    ]);
    // One to confirm it again, one by the reconcile of its whole mirror that follows.
    expect(h.calls("GET /connection")).toBe(2);
    expect((await connectionChanges()).at(-1)).toMatchObject({
      id: state!.connection_id,
      status: "active",
      previous: null,
    });
    // Catch-up read its event log again from its cursor.
    await waitFor(
      async () =>
        (
          await h.db
            .sql`select 1 from sync.cursors where merchant_id = ${MERCHANT} and last_run_status = 'ok'`
        ).length === 1,
      { timeoutMs: 30_000, what: "a catch-up run of the reconnected merchant" },
    );
  });

  it("a late connection.revoked of the old connection revokes nothing else; the merchant keeps syncing", {
    timeout: 120_000,
  }, async () => {
    const oldConnection = await connected();
    await revoked();
    await reconnected();
    const late = {
      id: "evt_late_revocation",
      type: "connection.revoked",
      created_at: new Date(Date.now() - 60_000).toISOString(),
      merchant_id: MERCHANT,
      location_id: null,
      connection_id: oldConnection,
      origin: { type: "web_app", application_id: null },
      data: { connection_id: oldConnection },
    } as unknown as EventEnvelope;
    await h.db.sql.begin((tx) =>
      storeEventsAndEnqueue(tx, [late], { source: "webhook", applicationId: APPLICATION_ID }),
    );
    await waitFor(async () => (await outcomes(h.db, [late.id]))[late.id] !== "pending", {
      what: "the late revocation settled",
    });
    expect(await outcomes(h.db, [late.id])).toEqual({ [late.id]: "stale" });
    const state = await merchant(MERCHANT);
    expect(state?.status).toBe("active");
    expect((await connections(MERCHANT)).map((c) => c.status)).toEqual(["revoked", "active"]);

    const order = h.sandbox.createOrder({ merchantId: MERCHANT });
    await h.ingest((e) => e.merchant_id === MERCHANT);
    await waitFor(() => mirrored(order.id), { what: "an order after the late revocation" });
  });

  it("`loops-sync changes` lists the revocation and the reconnect", { timeout: 120_000 }, async () => {
    const oldConnection = await connected();
    await revoked();
    await reconnected();
    const run = await runCli(
      ["changes", "--resource", "connection", "--merchant", MERCHANT, "--json"],
      { DATABASE_URL: h.db.url },
      100_000,
    );
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { resource_id: string; status: string; previous_status: string | null });
    expect(
      lines.map((l) => [l.resource_id === oldConnection ? "old" : "new", l.previous_status, l.status]),
    ).toEqual([
      ["old", null, "active"],
      ["old", "active", "revoked"],
      ["new", null, "active"],
    ]);
  });
});

describe("a 403 connection_not_active", () => {
  it("revokes the merchant and its mirrored connection row, in the feed", { timeout: 120_000 }, async () => {
    const order = h.sandbox.createOrder({ merchantId: "mer_demo_1" });
    await h.ingest((e) => e.merchant_id === "mer_demo_1");
    await waitFor(() => mirrored(order.id), { what: "mer_demo_1 confirmed and mirrored" });
    const [connection] = await connections("mer_demo_1");
    await settledJobs("mer_demo_1");
    // Revoked upstream, but its revocation is not delivered: the next fetch meets 403 connection_not_active.
    h.sandbox.revokeMerchant("mer_demo_1");
    const next = h.sandbox.createOrder({ merchantId: "mer_demo_1" });
    await h.ingest(
      (e) => e.merchant_id === "mer_demo_1" && e.type.startsWith("order.") && e.data.order_id === next.id,
    );
    await waitFor(async () => (await merchant("mer_demo_1"))?.status === "revoked", {
      what: "revoked by the 403",
    });
    expect(await connections("mer_demo_1")).toEqual([{ id: connection!.id, status: "revoked" }]);
    expect((await connectionChanges()).at(-1)).toMatchObject({
      id: connection!.id,
      status: "revoked",
      previous: "active",
    });
  });
});
