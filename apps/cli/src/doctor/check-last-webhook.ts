import type { Sql } from "@loops-sync/db";
import { checkResult, type DoctorCheck } from "./doctor-check.ts";

/** The newest webhook the receiver stored, and its age: proof that Loops reaches the receiver. */
export async function checkLastWebhook(sql: Sql, now: number = Date.now()): Promise<DoctorCheck> {
  // Newest first on events_received_idx: stops at the first webhook instead of reading the inbox.
  const [row] = await sql<{ id: string; merchant_id: string; received_at: Date }[]>`
    select id, merchant_id, received_at from sync.events
    where source = 'webhook' order by received_at desc limit 1`;
  if (!row) {
    return checkResult("last_webhook", "warn", "finding", "no webhook received yet", {
      fix: "in the partner portal, point a webhook endpoint at https://<your host>/webhooks/loops with the signing secret in LOOPS_WEBHOOK_SECRETS, and send its test event",
    });
  }
  return checkResult(
    "last_webhook",
    "ok",
    "finding",
    `last webhook ${row.id} (${row.merchant_id}) received ${describeAge(now - row.received_at.getTime())} ago`,
  );
}

function describeAge(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  if (s < 172_800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86_400)} days`;
}
