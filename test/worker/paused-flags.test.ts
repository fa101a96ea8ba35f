// graphile-worker asks for the paused merchants (forbiddenFlags) before every claim, also in the loop of a pool
// being replaced in a Postgres outage. A rejection there ended that loop, and the process with it (an unhandled
// rejection): the answer keeps the last list instead.
import { connect, pauseMerchant } from "@loops-sync/db";
import { pausedFlagsCache } from "@loops-sync/worker/jobs/paused-flags";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

describe("the paused merchants graphile-worker reads before each claim", () => {
  it("keeps the last list when Postgres cannot answer, and never rejects", async () => {
    await db.sql`insert into sync.merchants (id, learned_from) values ('mer_paused', 'config'), ('mer_fine', 'config')`;
    await pauseMerchant(db.sql, "mer_paused", 60);
    const sql = connect(db.url, { max: 1 });
    const logged: string[] = [];
    const flags = pausedFlagsCache(sql, { debug: (_: unknown, msg?: string) => logged.push(String(msg)) }, 0);
    expect(await flags()).toEqual(["merchant:mer_paused"]);

    // The pool gone (as a retired one is, or Postgres away): every query rejects.
    await sql.end();
    await expect(sql`select 1`).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 5));
    expect(await flags()).toEqual(["merchant:mer_paused"]);
    expect(logged).toEqual(["could not read the paused merchants; keeping the last list"]);

    // Never read: nothing is known to be paused.
    const fresh = pausedFlagsCache(sql, { debug: () => {} }, 0);
    expect(await fresh()).toEqual([]);
  });
});
