// An event Postgres can never store (a NUL in its JSON: jsonb refuses \u0000) in the event log: catch-up
// records it as refused with the reason, stores the good events of the same page, moves the cursor past it
// and stays past it; `loops-sync status` counts it.

import { runCatchup } from "@loops-sync/catchup";
import type { LoopsClient } from "@loops-sync/loops-client";
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loopsApiEnv } from "#testkit/processes";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { runCli } from "../support/operator-run.ts";
import { sandboxClient } from "../support/sandbox-orders.ts";

describe("catch-up past an event Postgres cannot store", () => {
  let db: TestDatabase;
  let sandbox: Sandbox;
  let client: LoopsClient;
  const merchant = "mer_demo_1";
  const catchup = (pageSize = 100) =>
    runCatchup({ sql: db.sql, client, applicationId: undefined, merchantId: merchant, pageSize });
  /** An order.updated event whose data holds a NUL (the order's channel_ref, as a hostile upstream sends). */
  const poisonedEvent = () => {
    const order = sandbox.createOrder({ merchantId: merchant });
    sandbox.updateOrder(order.id, { channel_ref: "X-\u0000-1" } as never);
    return sandbox.truth.events(merchant).at(-1)!;
  };
  const storedIds = async () =>
    new Set(
      (await db.sql<{ id: string }[]>`select id from sync.events where merchant_id = ${merchant}`).map(
        (r) => r.id,
      ),
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    sandbox = await startSandbox({ port: 0 });
    client = sandboxClient(sandbox);
    expect((await catchup()).merchants[0]?.status).toBe("ok");
  });
  afterAll(async () => {
    await sandbox?.close();
    await db?.drop();
  });

  it("stores the good events of a page that holds one, records it as refused, and stays past it", async () => {
    const before = sandbox.truth.events(merchant).length;
    sandbox.createOrder({ merchantId: merchant });
    const poisoned = poisonedEvent();
    const after = sandbox.createOrder({ merchantId: merchant });
    const fresh = sandbox.truth.events(merchant).slice(before);
    expect(fresh.length).toBeGreaterThan(3);

    const first = await catchup();
    expect(first.merchants[0]).toMatchObject({ status: "ok", eventsRefused: 1 });
    const stored = await storedIds();
    expect(fresh.filter((e) => !stored.has(e.id)).map((e) => e.id)).toEqual([poisoned.id]);
    expect(stored.has(sandbox.truth.events(merchant).find((e) => e.data.order_id === after.id)!.id)).toBe(
      true,
    );
    const [refused] = await db.sql`select id, merchant_id, type, source, reason from sync.refused_events`;
    expect(refused).toMatchObject({
      id: poisoned.id,
      merchant_id: merchant,
      type: "order.updated",
      source: "catchup",
    });
    expect(refused!.reason).toMatch(/SQLSTATE 22P05/);
    const [cursor] = await db.sql`select after_event_id from sync.cursors where merchant_id = ${merchant}`;
    expect(cursor!.after_event_id).toBe(sandbox.truth.events(merchant).at(-1)!.id);

    const again = await catchup();
    expect(again.merchants[0]).toMatchObject({ status: "ok", eventsRead: 0, eventsRefused: 0 });
  });

  it("gets past a page holding nothing but the unstorable event", async () => {
    const poisoned = poisonedEvent();
    const next = sandbox.createOrder({ merchantId: merchant });
    const result = await catchup(1);
    expect(result.merchants[0]).toMatchObject({ status: "ok", eventsRefused: 1 });
    const stored = await storedIds();
    expect(stored.has(poisoned.id)).toBe(false);
    expect(stored.has(sandbox.truth.events(merchant).find((e) => e.data.order_id === next.id)!.id)).toBe(
      true,
    );
  });

  it("is counted by `loops-sync status`", async () => {
    const r = await runCli(["status", "--json"], { DATABASE_URL: db.url, ...loopsApiEnv(sandbox) });
    expect(JSON.parse(r.stdout).recovery.refusedEvents).toEqual({ total: 2, lastDay: 2 });
    const text = await runCli(["status"], { DATABASE_URL: db.url, ...loopsApiEnv(sandbox) });
    expect(text.stdout).toContain("refused events: 2 Postgres cannot store");
  });
});
