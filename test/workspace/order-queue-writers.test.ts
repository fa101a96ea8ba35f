import path from "node:path";
import { describe, expect, it } from "vitest";
import { findByOwner } from "../support/source-files.ts";

/** The one module allowed to write `sync.order_refresh` and name its NOTIFY channel (its transitions are listed there). */
const OWNER = path.join("packages", "db", "src", "order-queue");

/** An insert, update or delete of the queue, in SQL or through Kysely, and the channel's name written out. */
const WRITES = [
  /\b(?:insert\s+into|update|delete\s+from)\s+sync\.order_refresh\b/gi,
  /\b(?:insertInto|updateTable|deleteFrom)\(\s*["']sync\.order_refresh["']/g,
  /\bloops_sync_order_refresh\b/g,
];

/** `file: statement` for each write of the queue (or naming of its channel) in `text`. */
function queueWrites(file: string, text: string): string[] {
  return WRITES.flatMap((pattern) => [...text.matchAll(pattern)].map((m) => `${file}: ${m[0]}`));
}

describe("one module writes sync.order_refresh", () => {
  it("no file outside packages/db/src/order-queue/ writes the queue or names its NOTIFY channel", async () => {
    expect(await findByOwner(OWNER, false, queueWrites)).toEqual([]);
  });

  it("finds the owner's own writes, so the check above can see one", async () => {
    // queueInboxOrders, queueOrders, claimQueuedOrders, holdOrders, dropQueuedOrders, the channel.
    expect((await findByOwner(OWNER, true, queueWrites)).length).toBeGreaterThanOrEqual(6);
  });

  it("recognises each form a write may take, and no read", () => {
    const forms = [
      "insert into sync.order_refresh (merchant_id) values ($1)",
      "delete from sync.order_refresh where id in (select id from mine)",
      "update sync.order_refresh set not_before = now()",
      'db.deleteFrom("sync.order_refresh")',
      'const CHANNEL = "loops_sync_order_refresh";',
    ];
    for (const form of forms) expect(queueWrites("x.ts", form)).toHaveLength(1);
    const reads = [
      "select merchant_id from sync.order_refresh where not_before is null",
      "not exists (select 1 from sync.order_refresh r where r.event_id = e.id)",
      'db.selectFrom("sync.order_refresh")',
      "insert into sync.order_refresh_archive (id) values ($1)",
    ];
    for (const read of reads) expect(queueWrites("x.ts", read)).toEqual([]);
  });
});
