// The feed's TypeScript lists (@loops-sync/schema, change-feed.ts) against the migrated database's SQL.
import { CHANGE_RESOURCES, CHANGES_CHANNEL } from "@loops-sync/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

describe("the change feed's lists", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("CHANGE_RESOURCES is exactly what replica.changes.resource's check constraint allows", async () => {
    const [row] = await db.sql<{ def: string }[]>`
      select pg_get_constraintdef(c.oid) as def from pg_constraint c
      where c.conrelid = 'replica.changes'::regclass and c.contype = 'c'
        and pg_get_constraintdef(c.oid) like '%resource%'`;
    const allowed = [...row!.def.matchAll(/'([^']+)'::text/g)].map((m) => m[1]);
    expect([...allowed].sort()).toEqual([...CHANGE_RESOURCES].sort());
  });

  it("CHANGES_CHANNEL is the channel replica.changes notifies", async () => {
    const [row] = await db.sql<{ body: string }[]>`
      select prosrc as body from pg_proc where oid = 'replica.notify_changes'::regproc`;
    expect(row!.body).toContain(`pg_notify('${CHANGES_CHANNEL}'`);
  });
});
