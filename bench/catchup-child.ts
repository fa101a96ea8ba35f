// Child process of bench/measure-catchup.ts: one catch-up run (`runCatchup`, what `loops-sync catchup` and the
// worker's catchup task call) in a process of its own, so its memory is measured apart. Reads the same
// environment variables as loops-sync and prints its result as one JSON line.
import { runCatchup } from "@loops-sync/catchup";
import { loadEnv } from "@loops-sync/config";
import { connect } from "@loops-sync/db";
import { LoopsClient } from "@loops-sync/loops-client";

const env = loadEnv(process.env, {
  require: ["LOOPS_API_URL", "LOOPS_AUTH_URL", "LOOPS_CLIENT_ID", "LOOPS_CLIENT_SECRET"],
});
const sql = connect(env.DATABASE_URL!, {
  max: env.DATABASE_POOL_SIZE,
  applicationName: "loops-sync catchup",
});
const client = new LoopsClient({
  apiUrl: env.LOOPS_API_URL!,
  authUrl: env.LOOPS_AUTH_URL!,
  clientId: env.LOOPS_CLIENT_ID!,
  clientSecret: env.LOOPS_CLIENT_SECRET!,
});
try {
  const result = await runCatchup({
    sql,
    client,
    applicationId: env.LOOPS_APPLICATION_ID,
    merchantIds: env.LOOPS_MERCHANT_IDS,
  });
  const { merchants, ...totals } = result;
  console.log(
    JSON.stringify({
      msg: "catchup result",
      ...totals,
      memory: process.memoryUsage(),
      merchants: merchants.map((m) => ({
        ...m,
        backfill: m.backfill ? { pages: m.backfill.pages } : undefined,
      })),
    }),
  );
  if (result.failed.length > 0) process.exitCode = 1;
} finally {
  await sql.end({ timeout: 5 });
}
