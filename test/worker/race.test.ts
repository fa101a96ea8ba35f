import { connect, type EventEnvelope, type Sql } from "@loops-sync/db";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { sandboxClient } from "../support/sandbox-client.ts";
import { createHarness, type Harness, settled } from "../support/worker-harness.ts";

let h: Harness;
const pools: Sql[] = [];
beforeAll(async () => {
  h = await createHarness();
});
// The workers a test started run on its pools: stop them, then end the pools, before the next test.
afterEach(async () => {
  await Promise.all((h?.workers ?? []).splice(0).map((w) => w.stop()));
  await Promise.all(pools.splice(0).map((p) => p.end()));
});
afterAll(async () => {
  await h?.close();
});

describe("worker: several workers at once", () => {
  it("three workers racing on the same orders end with the newest version and consistent children", async () => {
    // Every write to replica.orders is recorded, so a version going backwards (or rewritten) is seen
    // even when a later fetch would have repaired it.
    // A confirmation writes the version it confirms again (applied from an event's payload, now fetched:
    // migration 0019); it is recorded apart, and any other write at the same or a lower version is not.
    await h.db
      .sql`create table public.order_writes (id text, old_version bigint, new_version bigint, confirm boolean)`;
    await h.db.sql.unsafe(`
      create function public.record_order_write() returns trigger language plpgsql as $$
      begin
        insert into public.order_writes values (new.id, old.version, new.version,
          new.version = old.version and old.fetched_version < old.version and new.fetched_version = new.version);
        return new;
      end $$;
      create trigger record_order_write after update on replica.orders
        for each row execute function public.record_order_write();`);
    // Answers held up on their way back for a random while, so an older version of an order often
    // reaches the database after a newer one was applied by another worker.
    const lateAnswers: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      const body = await response.arrayBuffer();
      await new Promise((r) => setTimeout(r, Math.random() * 200));
      return new Response(body, { status: response.status, headers: response.headers });
    };
    for (let i = 0; i < 3; i++) {
      const sql = connect(h.db.url, { max: 3 });
      pools.push(sql);
      const client = sandboxClient(h.sandbox, {
        fetch: lateAnswers,
      });
      await h.worker({ sql, client, concurrency: 3 });
    }
    const orders = Array.from({ length: 6 }, () =>
      h.sandbox.createOrder({ merchantId: "mer_demo_1", type: "delivery" }),
    );
    const ids: string[] = [];
    // Orders change while the workers fetch them, so fetches return different versions and race to apply.
    for (let round = 0; round < 8; round++) {
      for (const order of orders) {
        if (round > 0 && round < 5) h.sandbox.advanceOrder(order.id);
        if (round >= 5) h.sandbox.updateOrder(order.id, { notes: `round ${round}` });
        // Unkeyed, forced refreshes: every worker fetches and applies concurrently, whatever the events say.
        await h.db.sql`
          select graphile_worker.add_job('refresh_order',
            json_build_object('merchantId', 'mer_demo_1', 'orderId', ${order.id}::text, 'force', true))
          from generate_series(1, 3)`;
      }
      ids.push(...(await h.ingest((e: EventEnvelope) => e.merchant_id === "mer_demo_1")));
      await new Promise((r) => setTimeout(r, 80));
    }
    await waitFor(() => settled(h.db, ids), { what: "all events settled", timeoutMs: 20_000 });
    await waitFor(
      async () => {
        const [row] = await h.db
          .sql`select count(*)::int as n from graphile_worker.jobs where task_identifier = 'refresh_order'`;
        return row!.n === 0;
      },
      { what: "queue drained" },
    );
    for (const order of orders) {
      const truth = h.sandbox.truth.order(order.id)!;
      const [stored] = await h.db.sql`
        select o.version, o.status,
               (select count(*)::int from replica.order_items i where i.order_id = o.id) as items,
               (select count(*)::int from replica.order_status_history s where s.order_id = o.id) as history
        from replica.orders o where o.id = ${order.id}`;
      expect(stored).toEqual({
        version: truth.version,
        status: truth.status,
        items: truth.items.length,
        history: truth.status_history.length,
      });
    }
    const [failed] = await h.db.sql`select count(*)::int as n from sync.events where outcome = 'failed'`;
    expect(failed!.n).toBe(0);
    const [writes] = await h.db.sql`
      select count(*)::int as updates, count(*) filter (where new_version <= old_version and not confirm)::int as backwards
      from public.order_writes`;
    expect(writes!.updates).toBeGreaterThan(0);
    expect(writes!.backwards).toBe(0);
  });
});
