// A partner's TypeScript against the installed @loops-sync/schema: must type-check (test/package/schema-install.test.ts).
import {
  type Change,
  ChangesExpiredError,
  consumeChanges,
  type Database,
  followChanges,
  kyselyOver,
  readChanges,
  snapshotThenFollow,
} from "@loops-sync/schema";
import postgres from "postgres";

const sql = postgres("postgres://localhost/none");
const changes: Change[] = await readChanges(sql, { after: 0, limit: 10 });
const position: number = changes[0]?.position ?? 0;
for await (const change of followChanges(sql, { after: position, signal: AbortSignal.timeout(1000) })) {
  const transition: [string | null, string | null] = [change.previous_status, change.status];
  console.log(transition, change.changed_at.toISOString());
}
try {
  await readChanges(sql, { after: 0 });
} catch (error) {
  if (error instanceof ChangesExpiredError)
    console.log(error.code satisfies "changes_expired", error.prunedThrough);
}
const db = kyselyOver<Database>(sql);
const rows = await db.selectFrom("replica.changes").select(["position", "previous_status"]).execute();
const top: number | undefined = rows[0]?.position;
console.log(top);
await consumeChanges(sql, { consumer: "billing", signal: AbortSignal.timeout(1000) }, async (change, tx) => {
  await tx`insert into invoices (order_id) values (${change.resource_id})`;
});
const start = await snapshotThenFollow(
  sql,
  async (tx) => tx<{ id: string }[]>`select id from replica.orders`,
  {
    resources: ["order"],
  },
);
const ids: string[] = start.snapshot.map((r) => r.id);
const from: number = start.after;
for await (const change of start.changes) console.log(ids.length, from, change.position);
