// The README's "react to new orders" example, run as a program against a real database: it follows the
// change feed, prints a line per order change, and resumes from its own cursor table after a restart.
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { readChanges } from "@loops-sync/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { describeOrderChange } from "../../examples/react-to-orders/react-to-orders.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { orderChange, writeChanges } from "../support/write-changes.ts";

const EXAMPLE = path.resolve(import.meta.dirname, "../../examples/react-to-orders/react-to-orders.ts");

/** The example as a process: its stdout lines, its stderr, and its exit. */
function start(url: string) {
  const child: ChildProcess = spawn(process.execPath, [EXAMPLE], {
    env: { PATH: process.env.PATH ?? "", DATABASE_URL: url },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const run = { stdout: "", stderr: "", lines: () => run.stdout.split("\n").filter(Boolean) };
  child.stdout!.on("data", (d: Buffer) => (run.stdout += d));
  child.stderr!.on("data", (d: Buffer) => (run.stderr += d));
  const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
  return { child, run, exited };
}

describe("examples/react-to-orders", () => {
  let db: TestDatabase;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    for (const child of children) child.kill("SIGKILL");
    await db?.drop();
  });

  it("describes new, moved, re-versioned and removed orders, and skips other resources", async () => {
    await writeChanges(db.sql, [
      orderChange("ord_d1", 1, "placed", null),
      orderChange("ord_d1", 2, "accepted", "placed"),
      { ...orderChange("ord_d1", 3, "accepted", "accepted") },
      { ...orderChange("ord_d1", 4, "accepted", "accepted"), operation: "delete" },
      {
        resource: "location",
        resourceId: "loc_1",
        merchantId: "mer_feed_1",
        operation: "update",
        source: "catchup",
      },
    ]);
    const changes = await readChanges(db.sql, { after: 0 });
    expect(changes.map(describeOrderChange)).toEqual([
      "new order ord_d1 (mer_feed_1): placed",
      "order ord_d1 (mer_feed_1): placed → accepted",
      "order ord_d1 (mer_feed_1) changed (version 2 → 3), still accepted",
      "order ord_d1 (mer_feed_1) removed",
      undefined,
    ]);
  });

  it("runs as a program, prints each order change once, and resumes from its cursor after a restart", async () => {
    const [row] = await db.sql<{ head: number }[]>`select max(position) as head from replica.changes`;
    const head = row!.head;
    const first = start(db.url);
    children.push(first.child);
    await waitFor(() => first.run.stderr.includes("following the change feed after position 0"), {
      what: `the example to start (stderr: ${first.run.stderr})`,
    });
    await writeChanges(db.sql, [orderChange("ord_k1", 1, "placed", null)]);
    await writeChanges(db.sql, [orderChange("ord_k1", 2, "accepted", "placed")]);
    const before = [
      "new order ord_d1 (mer_feed_1): placed",
      "order ord_d1 (mer_feed_1): placed → accepted",
      "order ord_d1 (mer_feed_1) changed (version 2 → 3), still accepted",
      "order ord_d1 (mer_feed_1) removed",
      "new order ord_k1 (mer_feed_1): placed",
      "order ord_k1 (mer_feed_1): placed → accepted",
    ];
    await waitFor(() => first.run.lines().length >= before.length, { what: "the first run's lines" });
    first.child.kill("SIGTERM");
    expect(await first.exited, first.run.stderr).toBe(0);
    expect(first.run.lines()).toEqual(before);
    const [cursor] = await db.sql<{ position: number }[]>`
      select position from public.feed_cursors where consumer = 'react-to-orders'`;
    expect(cursor!.position).toBe(head + 2);

    // Committed while it is down; then it starts again from its cursor.
    await writeChanges(db.sql, [
      orderChange("ord_k2", 1, "placed", null),
      orderChange("ord_k1", 3, "ready", "accepted"),
    ]);
    const second = start(db.url);
    children.push(second.child);
    await waitFor(() => second.run.stderr.includes(`after position ${head + 2}`), {
      what: `the restart (stderr: ${second.run.stderr})`,
    });
    // A change after the backlog: any repeat of an earlier one would have been printed before it.
    await writeChanges(db.sql, [orderChange("ord_k3", 1, "placed", null)]);
    await waitFor(() => second.run.lines().includes("new order ord_k3 (mer_feed_1): placed"), {
      what: "the change after the restart",
    });
    second.child.kill("SIGTERM");
    expect(await second.exited, second.run.stderr).toBe(0);
    expect(second.run.lines()).toEqual([
      "new order ord_k2 (mer_feed_1): placed",
      "order ord_k1 (mer_feed_1): accepted → ready",
      "new order ord_k3 (mer_feed_1): placed",
    ]);
  });
});
