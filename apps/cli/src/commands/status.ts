import type {
  AttentionItem,
  pageMerchants as PageMerchants,
  SyncStatus,
  TableSize,
} from "@loops-sync/status";
import { Command, Option } from "commander";
import { CliError, EXIT } from "../cli-error.ts";
import { parseSeconds } from "../flags.ts";
import { JSON_FLAG_HELP, printJson } from "../output.ts";

/** Work waiting longer than this (seconds) makes `status` exit 1, unless --max-lag says otherwise. */
export const DEFAULT_MAX_LAG_SECONDS = 300;

const ago = (iso: string | null, now: number): string => {
  if (!iso) return "never";
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  return s < 120 ? `${s}s ago` : s < 7200 ? `${Math.round(s / 60)}m ago` : `${Math.round(s / 3600)}h ago`;
};

const seconds = (n: number | null): string => (n === null ? "-" : `${Math.round(n)}s`);

const size = (bytes: number): string =>
  bytes < 1024 ** 2
    ? `${Math.round(bytes / 1024)} kB`
    : bytes < 1024 ** 3
      ? `${(bytes / 1024 ** 2).toFixed(1)} MB`
      : `${(bytes / 1024 ** 3).toFixed(2)} GB`;

function printTables(tables: readonly TableSize[], attention: readonly AttentionItem[]): void {
  console.log(
    `tables: ${tables.map((t) => `${t.table} ${size(t.totalBytes)} (~${t.estimatedRows ?? "?"} rows)`).join(", ")}`,
  );
  // At thousands of merchants an outage names every one of them: the first few say enough.
  for (const item of attention.slice(0, TABLE_ROWS)) console.log(`needs attention: ${item.detail}`);
  if (attention.length > TABLE_ROWS) {
    console.log(`needs attention: ${attention.length - TABLE_ROWS} more; \`status --json\` lists every one`);
  }
}

function printChangeFeed(feed: SyncStatus["changeFeed"], now: number): void {
  const rows = feed.rows === null ? "?" : feed.rowsExact ? `${feed.rows}` : `~${feed.rows}`;
  console.log(
    feed.headPosition === null
      ? `change feed: empty, pruned through position ${feed.prunedThrough}, ${size(feed.totalBytes)}`
      : `change feed: head position ${feed.headPosition} (written ${ago(feed.headChangedAt, now)}), ` +
          `oldest retained ${feed.oldestPosition}, pruned through ${feed.prunedThrough}, ` +
          `${rows} change(s), ${size(feed.totalBytes)}`,
  );
}

/** More merchants than this: the table shows the most behind, and says how many it left out. */
const TABLE_ROWS = 50;

function printStatus(whole: SyncStatus, pageMerchants: typeof PageMerchants): void {
  const now = Date.parse(whole.generatedAt);
  const many = whole.merchants.length > TABLE_ROWS;
  const status = many ? pageMerchants(whole, { sort: "lag", limit: TABLE_ROWS }) : whole;
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
  if (many) {
    console.log(
      `the ${TABLE_ROWS} most behind of ${whole.merchantsTotal} merchants; \`status --json\` lists every one`,
    );
  }
  for (const m of status.merchants) {
    if (m.lastCatchup.error) console.log(`${m.merchantId} last catch-up: ${m.lastCatchup.error}`);
  }
  const q = status.queue;
  console.log(
    `queue: ${q.waiting} waiting, ${q.scheduled} scheduled, ${q.running} running, ${q.failed} failed; ` +
      `${q.ordersToRefresh} orders to refresh` +
      (q.oldestOrderToRefreshSeconds === null ? "" : ` (oldest ${q.oldestOrderToRefreshSeconds} s)`) +
      `; ${q.ordersUnconfirmed} unconfirmed` +
      (q.oldestUnconfirmedSeconds === null ? "" : ` (oldest ${q.oldestUnconfirmedSeconds} s)`) +
      (q.lockedTooLong > 0 ? `; ${q.lockedTooLong} locked longer than their task can run` : ""),
  );
  for (const t of whole.scheduledTicks) {
    const trickle = t.intervalSeconds !== null;
    console.log(
      `scheduled ${t.task}: ${t.itemsDone}/${t.items} merchants, ` +
        (t.running
          ? `running since ${t.startedAt}`
          : trickle
            ? `trickle every ${seconds(t.effectiveIntervalSeconds)} (configured ${seconds(t.intervalSeconds)}` +
              `${(t.effectiveIntervalSeconds ?? 0) > (t.intervalSeconds ?? 0) ? ", stretched: the merchants do not fit RECONCILE_BUDGET_SHARE" : ""})`
            : `last took ${seconds(t.lastDurationSeconds)}`) +
        (t.overran ? ", OVERRAN its interval (raise LOOPS_MAX_RPS or space the schedule)" : "") +
        `; ${t.overruns} overrun(s) so far`,
    );
  }
  const b = whole.requestBudget;
  console.log(
    `Loops requests granted in the last second: ${b.grantedLastSecond}` +
      (b.narrowedRps === null ? "" : ` (narrowed to ${b.narrowedRps}/s by a 429 until ${b.narrowedUntil})`),
  );
  const refused = whole.recovery.refusedEvents;
  if (refused.total > 0) {
    console.log(
      `refused events: ${refused.total} Postgres cannot store (${refused.lastDay} in the last day)`,
    );
  }
  for (const job of q.failedJobs.slice(0, 5)) {
    console.log(
      `  failed job ${job.id} ${job.task} (${job.attempts}/${job.maxAttempts}): ${job.lastError ?? ""}`,
    );
  }
  if (whole.unhandledEvents.length > 0) {
    const counts = whole.unhandledEvents.map((u) => `${u.type} ${u.count}`).join(", ");
    console.log(`unhandled events by type: ${counts}`);
  }
  printChangeFeed(whole.changeFeed, now);
  for (const c of whole.consumers) {
    console.log(
      `feed consumer ${c.name}: acknowledged through ${c.ackedThrough}; lag ${c.lagChanges} change(s), ${seconds(c.lagSeconds)}; ` +
        `${c.leased} leased; last receive ${ago(c.lastReceiveAt, now)}`,
    );
  }
  if (whole.gatewayWrites.length > 0) {
    const counts = whole.gatewayWrites.map((w) => `${w.resource} ${w.changes}`).join(", ");
    console.log(`mirrored from gateway writes in the last hour: ${counts}`);
  }
  printForwarding(status);
}

function printForwarding({ forwarding: f, generatedAt }: SyncStatus): void {
  if (!f) return;
  const now = Date.parse(generatedAt);
  if (f.state === "off") {
    console.log(
      `forwarding to ${f.endpoint ?? "FORWARD_URL"}: off (no running worker has FORWARD_URL; ${f.forwarderSeenAt ? `one last seen ${ago(f.forwarderSeenAt, now)}` : "the last one stopped"}); ` +
        `${f.undelivered} undelivered, kept for RETENTION_DAYS, then pruned, unless a worker with FORWARD_URL sends them first; ${f.dead} dead`,
    );
    return;
  }
  const held = f.heldUntil ? `; held by the endpoint's Retry-After until ${f.heldUntil}` : "";
  console.log(
    `forwarding to ${f.endpoint ?? "FORWARD_URL"}: ${f.state}${held}; last 2xx ${ago(f.lastSuccessAt, now)}; ` +
      `${f.undelivered} undelivered` +
      (f.oldestUndeliveredSeconds === null ? "" : ` (oldest ${seconds(f.oldestUndeliveredSeconds)})`) +
      `; ${f.dead} dead` +
      (f.lastFailure ? `; last failure ${ago(f.lastFailureAt, now)}: ${f.lastFailure}` : ""),
  );
  for (const d of f.deadChanges.slice(0, 5)) {
    console.log(
      `  dead ${d.webhookId} ${d.resource} ${d.resourceId} (${d.attempts} attempts): ${d.lastError ?? ""}`,
    );
  }
}

export function createStatusCommand(): Command {
  return new Command("status")
    .description(
      "per merchant: cursor, last webhook, last catch-up, lag, pending and failed events, revoked or not; the job queue; the change feed's head and size",
    )
    .addOption(new Option("--json", JSON_FLAG_HELP))
    .addOption(
      new Option(
        "--max-lag <seconds>",
        "exit 1 when a merchant's oldest pending event, or the oldest queued order refresh, has waited longer",
      )
        .argParser(parseSeconds)
        .default(DEFAULT_MAX_LAG_SECONDS),
    )
    .action(async (options: { json?: boolean; maxLag: number }) => {
      // Loaded here, not above: `--help` and a usage error need none of it.
      const { describeStandby, needsAttention, pageMerchants, readStandby, readSyncStatus, readTableSizes } =
        await import("@loops-sync/status");
      const { openRuntime } = await import("../runtime.ts");
      const runtime = await openRuntime({ name: "status", poolSize: 2, readOnly: true });
      try {
        // null on a primary; on a standby every figure below is as of its replay.
        const standby = await readStandby(runtime.sql);
        const status = await readSyncStatus(runtime.sql);
        const tables = await readTableSizes(runtime.sql);
        const attention = needsAttention(status, options.maxLag);
        if (options.json) printJson({ ...status, standby, tables, attention });
        else {
          if (standby) console.log(describeStandby(standby));
          printStatus(status, pageMerchants);
          printTables(tables, attention);
        }
        if (attention.length > 0) {
          throw new CliError(`status: ${attention.length} thing(s) need attention (see above)`, EXIT.problem);
        }
      } finally {
        await runtime.close();
      }
    });
}
