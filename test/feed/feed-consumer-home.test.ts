// Migration 0027: the feed consumers' filter predicate, resource list and name pattern written once, in SQL,
// and the TypeScript names (@loops-sync/schema) equal to them; the functions of 0022 replaced in place.
import { CHANGE_RESOURCES, CONSUMER_NAME_PATTERN } from "@loops-sync/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

describe("the feed consumers' one predicate, one resource list and one name pattern", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("CHANGE_RESOURCES is replica.change_resources(), in its order", async () => {
    const [row] = await db.sql<{ r: string[] }[]>`select replica.change_resources() as r`;
    expect(row!.r).toEqual([...CHANGE_RESOURCES]);
  });

  it("CONSUMER_NAME_PATTERN is sync.consumer_name_pattern(), and sync.feed_consumers' check says the same", async () => {
    const [row] = await db.sql<{ p: string; check: string }[]>`
      select sync.consumer_name_pattern() as p,
             (select pg_get_constraintdef(c.oid) from pg_constraint c
               where c.conrelid = 'sync.feed_consumers'::regclass and c.contype = 'c'
                 and pg_get_constraintdef(c.oid) like '%name%') as check`;
    expect(row!.p).toBe(CONSUMER_NAME_PATTERN.source);
    expect(row!.check).toContain(`'${CONSUMER_NAME_PATTERN.source}'`);
    // And create_consumer refuses by it: a name the pattern refuses is 22023.
    const refused = await db.sql`select replica.create_consumer('-starts-badly')`.catch((e) => e.code);
    expect(refused).toBe("22023");
  });

  it("replica.change_matches: null is every resource or merchant, otherwise one of those named", async () => {
    const cases: [string, string | null, string[] | null, string[] | null, boolean][] = [
      ["order", "mer_1", null, null, true],
      ["order", "mer_1", ["order"], null, true],
      ["order", "mer_1", ["menu"], null, false],
      ["order", "mer_1", null, ["mer_2"], false],
      ["order", "mer_1", ["order", "menu"], ["mer_1"], true],
      ["channel", null, null, ["mer_1"], false],
      ["channel", null, ["channel"], null, true],
    ];
    for (const [resource, merchant, resources, merchants, want] of cases) {
      const [row] = await db.sql<{ m: boolean }[]>`
        select replica.change_matches(${resource}, ${merchant}, ${resources}::text[], ${merchants}::text[]) as m`;
      // A change of no merchant under a merchant filter is null, as 0022's predicate was: a where clause's no.
      expect(row!.m === true, JSON.stringify([resource, merchant, resources, merchants])).toBe(want);
    }
  });

  it("is inlined: a filter through change_matches uses replica.changes' resource index as the written-out one did", async () => {
    const plan = (
      await db.sql.unsafe(`explain (costs off) select * from replica.changes c
        where replica.change_matches(c.resource, c.merchant_id, array['order'], null)`)
    )
      .map((r) => Object.values(r)[0])
      .join("\n");
    expect(plan).not.toContain("change_matches");
    expect(plan).toMatch(/resource = ANY \('\{order\}'::text\[\]\)/);
  });

  it("read_changes, receive_changes and consumer_lag filter through change_matches, and write the predicate nowhere", async () => {
    const rows = await db.sql<{ fn: string; body: string }[]>`
      select p.oid::regprocedure::text as fn, p.prosrc as body from pg_proc p
      where p.oid in ('replica.read_changes(bigint,integer,text[],text[])'::regprocedure,
                      'replica.receive_changes(text,integer,integer)'::regprocedure,
                      'sync.consumer_lag()'::regprocedure)`;
    expect(rows).toHaveLength(3);
    for (const { fn, body } of rows) {
      expect(body, fn).toContain("replica.change_matches(");
      expect(body, fn).not.toMatch(/resources is null or/i);
    }
    // Same messages as 0022's (the 0.1.0 release and its users read them).
    const error = await db.sql`select * from replica.read_changes(0, 1, array['orders'])`.catch(
      (e) => e.message,
    );
    expect(error).toBe(
      `read_changes: resources must be null (every resource) or some of ${CHANGE_RESOURCES.join(", ")}, got {orders}`,
    );
    const unknown = await db.sql`select replica.create_consumer('x', array['orders'])`.catch(
      (e) => e.message,
    );
    expect(unknown).toBe(
      `unknown resource orders: expected ${CHANGE_RESOURCES.slice(0, -1).join(", ")} or ${CHANGE_RESOURCES.at(-1)}`,
    );
  });
});
