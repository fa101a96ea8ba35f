import { readSyncStatus, type SyncStatus } from "@loops-sync/status";
import { Command, Option } from "commander";
import { openRuntime } from "../runtime.ts";

const ago = (iso: string | null, now: number): string => {
  if (!iso) return "never";
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  return s < 120 ? `${s}s ago` : s < 7200 ? `${Math.round(s / 60)}m ago` : `${Math.round(s / 3600)}h ago`;
};

const seconds = (n: number | null): string => (n === null ? "-" : `${Math.round(n)}s`);

function printStatus(status: SyncStatus): void {
  const now = Date.parse(status.generatedAt);
  const rows = status.merchants.map((m) => ({
    merchant: m.merchantId,
    status: m.revoked ? "REVOKED" : m.pausedUntil ? `paused until ${m.pausedUntil}` : m.status,
    cursor: m.cursor.afterEventId ?? "(oldest retained)",
    "last webhook": ago(m.lastWebhookAt, now),
    "last catch-up": m.lastCatchup.status
      ? `${m.lastCatchup.status} ${ago(m.lastCatchup.finishedAt ?? m.lastCatchup.startedAt, now)}`
      : "never",
    lag: seconds(m.lag.appliedLagSeconds),
    pending: m.pendingEvents,
    failed: m.failedEvents,
  }));
  if (rows.length === 0) console.log("no merchants yet (set LOOPS_MERCHANT_IDS, or wait for a webhook)");
  else console.table(rows);
  for (const m of status.merchants) {
    if (m.lastCatchup.error) console.log(`${m.merchantId} last catch-up: ${m.lastCatchup.error}`);
  }
  const q = status.queue;
  console.log(
    `queue: ${q.waiting} waiting, ${q.scheduled} scheduled, ${q.running} running, ${q.failed} failed; ` +
      `${q.ordersToRefresh} orders to refresh` +
      (q.oldestOrderToRefreshSeconds === null ? "" : ` (oldest ${q.oldestOrderToRefreshSeconds} s)`),
  );
  for (const job of q.failedJobs.slice(0, 5)) {
    console.log(
      `  failed job ${job.id} ${job.task} (${job.attempts}/${job.maxAttempts}): ${job.lastError ?? ""}`,
    );
  }
}

export function createStatusCommand(): Command {
  return new Command("status")
    .description(
      "per merchant: cursor, last webhook, last catch-up, lag, pending and failed events, revoked or not; and the job queue",
    )
    .addOption(new Option("--json", "print the snapshot as JSON (fields are only ever added)"))
    .action(async (options: { json?: boolean }) => {
      const runtime = await openRuntime({ name: "status", poolSize: 2 });
      try {
        const status = await readSyncStatus(runtime.sql);
        if (options.json) console.log(JSON.stringify(status, null, 2));
        else printStatus(status);
      } finally {
        await runtime.close();
      }
    });
}
