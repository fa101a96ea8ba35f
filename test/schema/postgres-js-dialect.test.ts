import { type Database, kyselyOver } from "@loops-sync/schema";
import { sql as raw } from "kysely";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

describe("Kysely over a postgres.js handle", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  const merchant = (id: string) => ({ id, learned_from: "cli" });

  it("reads and writes through the pool with the pool's type parsers", async () => {
    const k = kyselyOver<Database>(db.sql);
    await k.insertInto("sync.merchants").values(merchant("mer_k1")).execute();
    await k.insertInto("sync.cursors").values({ merchant_id: "mer_k1", events_stored: 41 }).execute();
    const updated = await k
      .updateTable("sync.cursors")
      .set((eb) => ({ events_stored: eb("events_stored", "+", 1) }))
      .where("merchant_id", "=", "mer_k1")
      .executeTakeFirstOrThrow();
    expect(updated.numUpdatedRows).toBe(1n);
    const row = await k
      .selectFrom("sync.cursors")
      .select(["events_stored", "updated_at"])
      .where("merchant_id", "=", "mer_k1")
      .executeTakeFirstOrThrow();
    expect(row.events_stored).toBe(42);
    expect(row.updated_at).toBeInstanceOf(Date);
  });

  it("streams a query's rows in chunks", async () => {
    const k = kyselyOver<Database>(db.sql);
    await k.insertInto("sync.merchants").values(["mer_s1", "mer_s2", "mer_s3"].map(merchant)).execute();
    const ids: string[] = [];
    const query = k.selectFrom("sync.merchants").select("id").where("id", "like", "mer_s%").orderBy("id");
    for await (const row of query.stream(2)) ids.push(row.id);
    expect(ids).toEqual(["mer_s1", "mer_s2", "mer_s3"]);
  });

  it("runs a Kysely transaction on one reserved connection, with its isolation and access mode", async () => {
    const k = kyselyOver<Database>(db.sql);
    const seen = await k
      .transaction()
      .setIsolationLevel("repeatable read")
      .setAccessMode("read only")
      .execute(async (trx) => {
        const { rows } = await raw<{ level: string; pid: number }>`
          select current_setting('transaction_isolation') as level, pg_backend_pid() as pid`.execute(trx);
        const again = await raw<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx);
        const write = await trx
          .insertInto("sync.merchants")
          .values(merchant("mer_ro"))
          .execute()
          .catch((e: Error) => e.message);
        return { level: rows[0]!.level, samePid: rows[0]!.pid === again.rows[0]!.pid, write };
      });
    expect(seen).toEqual({
      level: "repeatable read",
      samePid: true,
      write: expect.stringMatching(/read-only/),
    });
    const level = await k
      .transaction()
      .setIsolationLevel("repeatable read")
      .execute((trx) =>
        raw<{ level: string }>`select current_setting('transaction_isolation') as level`.execute(trx),
      );
    expect(level.rows[0]!.level).toBe("repeatable read");
  });

  it("rolls a failed transaction back and returns its connection to the pool", async () => {
    const k = kyselyOver<Database>(db.sql);
    const failed = await k
      .transaction()
      .execute(async (trx) => {
        await trx.insertInto("sync.merchants").values(merchant("mer_rolled_back")).execute();
        throw new Error("give up");
      })
      .catch((e: Error) => e.message);
    expect(failed).toBe("give up");
    const found = await k
      .selectFrom("sync.merchants")
      .select("id")
      .where("id", "=", "mer_rolled_back")
      .execute();
    expect(found).toEqual([]);
    // Reserved connections that were never released would exhaust the 4-connection pool here.
    for (let i = 0; i < 8; i++) await k.transaction().execute((trx) => raw`select 1`.execute(trx));
  });

  it("reads inside the caller's postgres.js transaction, seeing its uncommitted rows", async () => {
    const inside = await db.sql
      .begin(async (tx) => {
        await tx`insert into sync.merchants (id) values ('mer_in_tx')`;
        const k = kyselyOver<Database>(tx);
        const row = await k
          .selectFrom("sync.merchants")
          .select(["id", "status"])
          .where("id", "=", "mer_in_tx")
          .execute();
        await tx`select pg_sleep(0)`;
        throw Object.assign(new Error("roll back"), { row });
      })
      .catch((e: { row: unknown }) => e.row);
    expect(inside).toEqual([{ id: "mer_in_tx", status: "active" }]);
    const k = kyselyOver<Database>(db.sql);
    await expect(k.transaction().execute(async () => 1)).resolves.toBe(1);
    const reserved = await db.sql.reserve();
    try {
      const after = kyselyOver<Database>(reserved).selectFrom("sync.merchants").select("id");
      await expect(after.where("id", "=", "mer_in_tx").execute()).resolves.toEqual([]);
    } finally {
      reserved.release();
    }
  });
});
