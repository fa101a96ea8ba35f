// The budget's slot arithmetic as TypeScript reads it (packages/db/src/request-budget/budget-slots.ts) against
// the SQL that grants (sync.take_request_tokens, migrations 0014 and 0025).
import { BUDGET_SLOT_MS, BUDGET_WINDOW_SLOTS, budgetSlotCap } from "@loops-sync/db";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db?.drop());

/** The per-slot cap as sync.take_request_tokens writes it. */
const SQL_CAP = "greatest(1, (rate + 9) / 10)";

describe("the budget's slots", () => {
  it("are the slot length, window and per-slot cap sync.take_request_tokens uses", async () => {
    // Both forms: 0014's and 0025's with a background share.
    const rows = await db.sql<{ body: string }[]>`
      select prosrc as body from pg_proc
      where proname = 'take_request_tokens' and pronamespace = 'sync'::regnamespace`;
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row.body).toContain(`slot_ms constant integer := ${BUDGET_SLOT_MS};`);
      expect(row.body).toContain(`slots constant integer := ${BUDGET_WINDOW_SLOTS};`);
      expect(row.body).toContain(SQL_CAP);
    }
    const rates = [1, 2, 9, 10, 11, 19, 20, 99, 100, 101, 999, 1000, 1001];
    const caps = await db.sql<{ cap: number }[]>`
      select ${db.sql.unsafe(SQL_CAP)} as cap from unnest(${rates}::int[]) with ordinality as t(rate, n) order by n`;
    expect(caps.map((c) => c.cap)).toEqual(rates.map(budgetSlotCap));
  });
});
