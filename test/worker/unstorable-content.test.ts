// Content Postgres can never store (SQLSTATE class 22 or 54, the one rule: unstorableReason) is recorded as
// failed by the worker at once, as the receiver and catch-up refuse it, instead of being retried for hours.
// Here a trigger refuses one order, or one brand, with 54000 program_limit_exceeded (what an array or JSON
// past Postgres's limits raises).

import { type EventEnvelope, storeEventsAndEnqueue } from "@loops-sync/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { APPLICATION_ID, createHarness, type Harness, outcomes, settled } from "../support/worker-harness.ts";

const MERCHANT = "mer_demo_1";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
  await h.worker();
});
afterAll(async () => {
  await h?.close();
});

/** A trigger on `table` that refuses the row whose id is `id` with SQLSTATE 54000. */
async function refuseRow(table: string, id: string): Promise<void> {
  const name = `refuse_${table.replace(".", "_")}`;
  await h.db.sql.unsafe(`
    create function public.${name}() returns trigger language plpgsql as $$
    begin
      if new.id = '${id}' then
        raise exception 'row is too big for this database' using errcode = '54000';
      end if;
      return new;
    end $$;
    create trigger ${name} before insert or update on ${table}
      for each row execute function public.${name}();`);
}

const eventRows = (ids: readonly string[]) =>
  h.db.sql<{ id: string; outcome: string; error: string | null }[]>`
    select id, outcome, error from sync.events where id = any(${[...ids]}::text[]) order by id`;

describe("worker: content Postgres refuses with a class 54 error", () => {
  it("fails the refused order without a retrying job, and applies another order beside it", async () => {
    const refused = h.sandbox.createOrder({ merchantId: MERCHANT });
    const kept = h.sandbox.createOrder({ merchantId: MERCHANT });
    await refuseRow("replica.orders", refused.id);
    const refusedIds = await h.ingest((e) => e.data.order_id === refused.id);
    const keptIds = await h.ingest((e) => e.data.order_id === kept.id);
    await waitFor(() => settled(h.db, [...refusedIds, ...keptIds]), { what: "both orders' events settled" });

    const rows = await eventRows(refusedIds);
    expect(rows.map((r) => r.outcome)).toEqual(refusedIds.map(() => "failed"));
    for (const r of rows) expect(r.error).toMatch(/Postgres refused the data \(54000\)/);
    expect(Object.values(await outcomes(h.db, keptIds))).toEqual(keptIds.map(() => "applied"));
    // Not handed to a refresh_order job that would retry it: nothing of it is left to run.
    const [left] = await h.db.sql<{ jobs: number; queued: number }[]>`
      select (select count(*)::int from graphile_worker.jobs where key = ${`order:${MERCHANT}:${refused.id}`})
               as jobs,
             (select count(*)::int from sync.order_refresh where order_id = ${refused.id}) as queued`;
    expect(left).toEqual({ jobs: 0, queued: 0 });
    const stored = await h.db.sql`select id from replica.orders where id = any(${[refused.id, kept.id]})`;
    expect(stored).toEqual([{ id: kept.id }]);
  });

  it("fails the event of a refused brand at its job's first attempt", async () => {
    const brandId = "brd_demo_1";
    await refuseRow("replica.brands", brandId);
    const event = {
      id: "evt_brand_too_big",
      type: "brand.updated",
      created_at: new Date().toISOString(),
      merchant_id: MERCHANT,
      location_id: null,
      connection_id: null,
      origin: { type: "web_app", application_id: null },
      data: { brand_id: brandId },
    } as unknown as EventEnvelope;
    await h.db.sql.begin((tx) =>
      storeEventsAndEnqueue(tx, [event], { source: "webhook", applicationId: APPLICATION_ID }),
    );
    await waitFor(() => settled(h.db, [event.id]), { what: "the brand event settled" });

    const [row] = await eventRows([event.id]);
    expect(row).toMatchObject({ outcome: "failed", error: expect.stringMatching(/\(54000\)/) });
    // The job ended on its first attempt: it is not left in graphile_worker.jobs for a retry.
    const [left] = await h.db.sql<{ n: number }[]>`
      select count(*)::int as n from graphile_worker.jobs where task_identifier = 'refresh_brand'`;
    expect(left!.n).toBe(0);
  });
});
