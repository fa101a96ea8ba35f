import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT, sourceFiles } from "../support/source-files.ts";

/**
 * The one folder that owns each table of `sync` and `replica` (docs/architecture.md, "Who owns which table"):
 * its writes live there. A write inside a SQL function of the migrations counts too: the owner calls the
 * function (or FUNCTION_WRITES_ALLOWED says who else does, and why).
 */
const TABLE_OWNERS: Record<string, string> = {
  "sync.events": "packages/db/src/inbox",
  "sync.order_refresh": "packages/db/src/order-queue",
  "sync.request_budget": "packages/db/src/request-budget",
  "sync.role_grants": "packages/db/src/roles",
  "sync.merchants": "packages/db/src/merchants",
  "sync.upstream_pauses": "packages/replica/src/upstream",
  "sync.resource_refusals": "packages/replica/src/upstream",
  "sync.scheduled_ticks": "packages/replica/src/jobs",
  "sync.cursors": "packages/catchup/src",
  "sync.backfills": "packages/catchup/src",
  "sync.refused_events": "packages/catchup/src",
  "sync.worker_pools": "apps/worker/src/jobs",
  "sync.forward_deliveries": "apps/worker/src/forwarding",
  "sync.forward_progress": "apps/worker/src/forwarding",
  "sync.forward_rate": "apps/worker/src/forwarding",
  "sync.feed_consumers": "packages/db/src/feed-consumers",
  "sync.feed_consumer_leases": "packages/db/src/feed-consumers",
  "replica.changes": "packages/db/src/change-feed",
  "replica.change_feed_state": "packages/db/src/change-feed",
  "replica.orders": "packages/replica/src/orders",
  "replica.order_items": "packages/replica/src/orders",
  "replica.order_item_modifiers": "packages/replica/src/orders",
  "replica.order_status_history": "packages/replica/src/orders",
  "replica.brands": "packages/replica/src/menus",
  "replica.menus": "packages/replica/src/menus",
  "replica.menu_categories": "packages/replica/src/menus",
  "replica.menu_products": "packages/replica/src/menus",
  "replica.menu_product_variants": "packages/replica/src/menus",
  "replica.menu_product_modifier_groups": "packages/replica/src/menus",
  "replica.menu_modifier_groups": "packages/replica/src/menus",
  "replica.menu_modifier_options": "packages/replica/src/menus",
  "replica.jobs": "packages/replica/src/menus",
  "replica.job_results": "packages/replica/src/menus",
  "replica.connections": "packages/replica/src/merchants",
  "replica.merchants": "apps/worker/src/merchants",
  "replica.locations": "apps/worker/src/mirror",
  "replica.channels": "apps/worker/src/mirror",
  "replica.channel_connections": "apps/worker/src/mirror",
};

/**
 * Writes outside the owner, each with why it is not in the owner (yet). Keep it short. A `file` ending in `/`
 * is a folder: every write of the table under it counts as one.
 */
const ALLOWED: { table: string; file: string; why: string }[] = [
  {
    table: "sync.events",
    file: "packages/db/src/event-outcomes/",
    why: "the outcome's transitions (event-outcome-writers.test.ts holds the column to them)",
  },
  {
    table: "sync.events",
    file: "packages/db/src/retention/prune.ts",
    why: "retention: prune deletes old settled events",
  },
  {
    table: "sync.refused_events",
    file: "packages/db/src/retention/prune.ts",
    why: "retention: prune deletes old ones",
  },
  {
    table: "replica.orders",
    file: "packages/catchup/src/repair-order.ts",
    why: "verify --repair deletes an order upstream no longer has",
  },
  {
    table: "replica.connections",
    file: "apps/worker/src/merchants/upsert-merchant.ts",
    why: "GET /connection is mirrored in the merchant refresh's one statement",
  },
];

/** SQL functions that write a table and are called outside its owner, each with why. Keep it short. */
const FUNCTION_WRITES_ALLOWED: { fn: string; why: string }[] = [
  {
    fn: "replica.receive_changes",
    why: "the public feed consumer API: backends in any language call it, consumeChanges (@loops-sync/schema) too",
  },
  {
    fn: "replica.ack_changes",
    why: "the public feed consumer API: called in the backend's own transaction, consumeChanges's too",
  },
];

/**
 * Tables whose reads belong to their owner too: a second reader would keep its own copy of the table's rules
 * (the budget's window, its narrowing), which drifts from the owner's.
 */
const READ_ONLY_BY_OWNER = ["sync.request_budget"];

const WRITE = /\b(insert\s+into|update|delete\s+from)\s+((?:sync|replica)\.\w+)\b/gi;

/**
 * The tables each SQL function of the migrations writes, by its last definition (a later `create or replace`
 * wins). A body is the dollar-quoted text after the header; a SQL-standard body (`return …;`) writes nothing.
 */
async function functionWrites(): Promise<Map<string, string[]>> {
  const writes = new Map<string, string[]>();
  const dir = path.join(REPO_ROOT, "migrations");
  for (const name of (await readdir(dir)).filter((n) => n.endsWith(".sql")).sort()) {
    const text = await readFile(path.join(dir, name), "utf8");
    for (const m of text.matchAll(
      /create\s+(?:or\s+replace\s+)?function\s+((?:sync|replica|reporting)\.\w+)\s*\(/gi,
    )) {
      const from = m.index + m[0].length;
      const quote = /\$(\w*)\$/g;
      quote.lastIndex = from;
      const open = quote.exec(text);
      const semicolon = text.indexOf(";", from);
      let body = "";
      if (open && (semicolon < 0 || open.index < semicolon)) {
        const start = open.index + open[0].length;
        body = text.slice(start, text.indexOf(open[0], start));
      }
      writes.set(m[1]!.toLowerCase(), [
        ...new Set([...body.matchAll(WRITE)].map((w) => w[2]!.toLowerCase())),
      ]);
    }
  }
  return writes;
}

/** `function  table` for each table a SQL function writes whose owner never calls that function. */
async function functionWritesOutsideOwners(tables: readonly string[]): Promise<string[]> {
  const texts = new Map<string, string>();
  for (const file of await sourceFiles({ tests: false }))
    texts.set(file.split(path.sep).join("/"), await readFile(path.join(REPO_ROOT, file), "utf8"));
  const found: string[] = [];
  for (const [fn, written] of await functionWrites()) {
    for (const table of written.filter((t) => tables.includes(t))) {
      const owner = TABLE_OWNERS[table]!;
      const called = [...texts].some(
        ([file, text]) => file.startsWith(`${owner}/`) && text.includes(`${fn}(`),
      );
      if (!called) found.push(`${fn}  ${table}`);
    }
  }
  return found.sort();
}

/** The tables the migrations create in `sync` and `replica`. */
async function createdTables(): Promise<string[]> {
  const tables = new Set<string>();
  const dir = path.join(REPO_ROOT, "migrations");
  for (const name of (await readdir(dir)).filter((n) => n.endsWith(".sql")))
    for (const m of (await readFile(path.join(dir, name), "utf8")).matchAll(
      /create\s+table\s+(?:if\s+not\s+exists\s+)?((?:sync|replica)\.\w+)/gi,
    ))
      tables.add(m[1]!.toLowerCase());
  return [...tables].sort();
}

/** `table  file` for each write of a created table outside its owner's folder (`table  folder/` under an allowed one). */
async function writesOutsideOwners(tables: readonly string[]): Promise<string[]> {
  const found = new Set<string>();
  for (const file of await sourceFiles({ tests: false })) {
    const text = await readFile(path.join(REPO_ROOT, file), "utf8");
    const slashed = file.split(path.sep).join("/");
    for (const m of text.matchAll(WRITE)) {
      const table = m[2]!.toLowerCase();
      const owner = TABLE_OWNERS[table];
      if (!tables.includes(table) || !owner || slashed.startsWith(`${owner}/`)) continue;
      const folder = ALLOWED.find(
        (a) => a.table === table && a.file.endsWith("/") && slashed.startsWith(a.file),
      );
      found.add(`${table}  ${folder?.file ?? slashed}`);
    }
  }
  return [...found].sort();
}

describe("every table of sync and replica has one owning folder", () => {
  it("names an owner for each table the migrations create, and no other", async () => {
    const tables = await createdTables();
    expect(tables.length).toBeGreaterThan(30);
    expect(Object.keys(TABLE_OWNERS).sort()).toEqual(tables);
  });

  it("names owners that are folders of the tree", async () => {
    for (const owner of new Set(Object.values(TABLE_OWNERS)))
      expect((await stat(path.join(REPO_ROOT, owner))).isDirectory(), owner).toBe(true);
  });

  it("finds writes outside the owners only where the allow-list says why", async () => {
    const outside = await writesOutsideOwners(await createdTables());
    expect(outside).toEqual(ALLOWED.map((a) => `${a.table}  ${a.file}`).sort());
  });

  it("sees the writes inside the migrations' SQL functions", async () => {
    const writes = await functionWrites();
    // A sample the parser must find: plpgsql bodies of 0014, 0022, and 0027's replacements.
    expect(writes.get("sync.take_request_tokens")).toEqual(["sync.request_budget"]);
    expect(writes.get("sync.reset_consumer")?.sort()).toEqual([
      "sync.feed_consumer_leases",
      "sync.feed_consumers",
    ]);
    expect(writes.get("replica.receive_changes")?.sort()).toEqual([
      "sync.feed_consumer_leases",
      "sync.feed_consumers",
    ]);
    expect(writes.get("replica.change_matches")).toEqual([]);
  });

  it("finds SQL functions writing a table only where its owner calls them, or the allow-list says why", async () => {
    const tables = await createdTables();
    const outside = (await functionWritesOutsideOwners(tables)).map((w) => w.split("  ")[0]!);
    expect([...new Set(outside)].sort()).toEqual(FUNCTION_WRITES_ALLOWED.map((a) => a.fn).sort());
  });

  it("finds no read of an owner-read table outside its owner", async () => {
    const outside: string[] = [];
    for (const file of await sourceFiles({ tests: false })) {
      const slashed = file.split(path.sep).join("/");
      const text = await readFile(path.join(REPO_ROOT, file), "utf8");
      for (const table of READ_ONLY_BY_OWNER) {
        const read = new RegExp(`\\b(from|join)\\s+${table.replace(".", "\\.")}\\b`, "i");
        if (read.test(text) && !slashed.startsWith(`${TABLE_OWNERS[table]}/`))
          outside.push(`${table}  ${slashed}`);
      }
    }
    expect(outside).toEqual([]);
  });
});
