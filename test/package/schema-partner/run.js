// A partner's backend in plain JavaScript on Node 20, against the installed @loops-sync/schema: reads the
// feed, follows it for six more changes across a loss of its connections, and prints what it saw as JSON lines.
import {
  ChangesExpiredError,
  consumeChanges,
  followChanges,
  kyselyOver,
  readChanges,
  snapshotThenFollow,
} from "@loops-sync/schema";
import postgres from "postgres";

const sql = postgres(process.env.DATABASE_URL, {
  max: 2,
  onnotice() {},
  connection: { application_name: "partner-backend" },
});
const out = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
out({ node: process.version });
try {
  await readChanges(sql, { after: 0 });
  out({ expired: false });
} catch (error) {
  out({
    expired: error instanceof ChangesExpiredError,
    code: error.code,
    prunedThrough: error.prunedThrough,
  });
}
const after = Number(process.argv[2]);
const read = await readChanges(sql, { after });
out({ read });
const followed = [];
const following = followChanges(sql, { after: read.at(-1).position });
out({ following: true });
for await (const change of following) {
  followed.push(change);
  // The test kills this process's connections now, then commits three more.
  if (followed.length === 3) out({ got: 3 });
  if (followed.length === 6) break;
}
out({ followed });
const last = await kyselyOver(sql)
  .selectFrom("replica.changes")
  .select(["position", "resource_id"])
  .orderBy("position", "desc")
  .executeTakeFirst();
out({ last });
// Three instances of one backend sharing a consumer: each change handled once, acknowledged in its transaction.
await sql`select replica.create_consumer('partner', after => 6)`;
const consumed = [];
const stop = new AbortController();
await Promise.all(
  [1, 2, 3].map(() =>
    consumeChanges(
      sql,
      { consumer: "partner", signal: stop.signal, pollIntervalMs: 200 },
      async (change, tx) => {
        await tx`select ${change.position}::bigint`;
        consumed.push(change.position);
        if (consumed.length === 3) stop.abort();
      },
    ),
  ),
);
out({ consumed: consumed.sort((a, b) => a - b) });
const {
  snapshot,
  after: snapshotAfter,
  changes,
} = await snapshotThenFollow(sql, (tx) => tx`select count(*)::int as n from replica.changes`);
await changes.return();
out({ snapshot: snapshot[0].n, after: snapshotAfter });
await sql.end();
