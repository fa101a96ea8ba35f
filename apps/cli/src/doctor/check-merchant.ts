import { type Connection, type LoopsClient, LoopsError } from "@loops-sync/loops-client";
import { checkResult, type DoctorCheck } from "./doctor-check.ts";
import type { RosterMerchant } from "./merchant-roster.ts";

/** The scopes the mirror reads with, and what goes unmirrored for a merchant that withheld each. */
export const REQUIRED_SCOPES: Readonly<Record<string, string>> = {
  "orders:read": "its orders (GET /orders is refused): nothing of what the mirror is for",
  "events:read": "its event log: catch-up cannot recover a webhook lost on the way",
  "locations:read": "its locations and their channel connections (orders are still mirrored)",
};

/** Loops keeps events 30 days (spec, Limits); a cursor older than that is refused. */
export const EVENT_RETENTION_DAYS = 30;
/** A cursor this old expires within days: worth a word before it does. */
const CURSOR_WARN_DAYS = 25;
const DAY_MS = 86_400_000;

/** Codes that refuse the application itself, whichever merchant was asked. */
const APPLICATION_REFUSALS = new Set(["unauthorized", "insufficient_scope", "application_suspended"]);

/**
 * One merchant, at most one call per check: GET /connection (active? which scopes granted?), then
 * GET /events?after=<cursor>&limit=1 (does the log answer, is the cursor still retained?).
 */
export async function checkMerchant(
  client: LoopsClient,
  merchant: RosterMerchant,
  now: number = Date.now(),
): Promise<DoctorCheck[]> {
  const id = merchant.id;
  const api = client.forMerchant(id);
  let connection: Connection;
  try {
    connection = await api.connection.get();
  } catch (error) {
    return [failedCall("connection", merchant, error)];
  }
  if (connection.status !== "active") return [revoked(merchant, `GET /connection says ${connection.status}`)];
  const checks = [
    checkResult(
      "connection",
      "ok",
      "finding",
      `${id}: connection ${connection.id} active, ${connection.location_ids.length} location(s) shared`,
      { merchantId: id },
    ),
  ];
  const missing = Object.keys(REQUIRED_SCOPES).filter((s) => !connection.scopes.includes(s));
  checks.push(
    missing.length === 0
      ? checkResult("scopes", "ok", "finding", `${id}: grants ${Object.keys(REQUIRED_SCOPES).join(", ")}`, {
          merchantId: id,
        })
      : checkResult(
          "scopes",
          "fail",
          "finding",
          `${id}: did not grant ${missing.map((s) => `${s} (unmirrored: ${REQUIRED_SCOPES[s]})`).join("; ")}`,
          {
            merchantId: id,
            fix: `ask the merchant to grant ${missing.join(", ")} to your application, then run \`loops-sync refresh --merchant ${id}\``,
          },
        ),
  );
  if (missing.includes("events:read")) {
    checks.push(
      checkResult("event_log", "skipped", "finding", `${id}: not asked, events:read is not granted`, {
        merchantId: id,
      }),
    );
    return checks;
  }
  checks.push(await checkEventLog(client, merchant, now));
  return checks;
}

async function checkEventLog(
  client: LoopsClient,
  merchant: RosterMerchant,
  now: number,
): Promise<DoctorCheck> {
  const id = merchant.id;
  const after = merchant.cursor?.afterEventId ?? undefined;
  const createdAt = merchant.cursor?.afterCreatedAt ?? null;
  const ageDays = createdAt ? (now - createdAt.getTime()) / DAY_MS : undefined;
  const expired = (why: string) =>
    checkResult(
      "event_log",
      "fail",
      "finding",
      `${id}: the catch-up cursor ${after} is outside Loops' ${EVENT_RETENTION_DAYS}-day event retention (${why}): events after it are gone from the log`,
      {
        merchantId: id,
        fix: `run \`loops-sync catchup --merchant ${id}\`: it backfills the orders and restarts at the oldest retained event; then \`loops-sync refresh --merchant ${id}\` for the rest`,
      },
    );
  // Known from our own row: no call needed to know Loops will refuse it.
  if (ageDays !== undefined && ageDays > EVENT_RETENTION_DAYS)
    return expired(`its event is ${Math.floor(ageDays)} days old`);
  try {
    await client.forMerchant(id).events.list({ ...(after ? { after } : {}), limit: 1 });
  } catch (error) {
    const refusedCursor =
      error instanceof LoopsError &&
      (error.status === 410 || (error.status === 400 && error.errors.some((e) => e.field === "after")));
    if (refusedCursor) return expired(`GET /events refused it: ${error.status} ${error.code}`);
    return failedCall("event_log", merchant, error);
  }
  if (!after) {
    return checkResult(
      "event_log",
      "ok",
      "finding",
      `${id}: the event log answers; no cursor yet (catch-up starts at the oldest retained event)`,
      {
        merchantId: id,
      },
    );
  }
  const age = ageDays === undefined ? "" : ` (its event is ${Math.floor(ageDays)} days old)`;
  if (ageDays !== undefined && ageDays > CURSOR_WARN_DAYS) {
    return checkResult(
      "event_log",
      "warn",
      "finding",
      `${id}: the event log answers; the catch-up cursor ${after}${age} leaves Loops' ${EVENT_RETENTION_DAYS}-day retention in ${Math.max(0, Math.ceil(EVENT_RETENTION_DAYS - ageDays))} day(s)`,
      {
        merchantId: id,
        fix: `make sure the worker runs (catch-up on CATCHUP_CRON), or run \`loops-sync catchup --merchant ${id}\``,
      },
    );
  }
  return checkResult(
    "event_log",
    "ok",
    "finding",
    `${id}: the event log answers; the catch-up cursor ${after}${age} is inside the retention`,
    {
      merchantId: id,
    },
  );
}

function revoked(merchant: RosterMerchant, why: string): DoctorCheck {
  return checkResult(
    "connection",
    "fail",
    "finding",
    `${merchant.id}: revoked its connection to your application (${why})`,
    {
      merchantId: merchant.id,
      fix: merchant.configured
        ? `remove ${merchant.id} from LOOPS_MERCHANT_IDS, or ask the merchant to connect your application again`
        : "ask the merchant to connect your application again; until then nothing of it is mirrored",
    },
  );
}

/** A call that did not answer: the merchant's verdict, the application's, or Loops not answering. */
function failedCall(check: string, merchant: RosterMerchant, error: unknown): DoctorCheck {
  if (!(error instanceof LoopsError)) throw error;
  const id = merchant.id;
  if (error.code === "connection_not_active")
    return revoked(merchant, `${error.status} connection_not_active`);
  if (error.kind === "not_found") {
    return checkResult(
      check,
      "fail",
      "finding",
      `${id}: Loops knows no such merchant connected to your application (${error.status} ${error.code})`,
      {
        merchantId: id,
        fix: merchant.configured
          ? `check ${id} in LOOPS_MERCHANT_IDS: a typo, another environment, or a merchant that never connected`
          : merchant.status === null
            ? `check the ID ${id}: a typo, another environment, or a merchant that never connected`
            : "a merchant learned from an event Loops no longer confirms; nothing to do unless you expected it",
      },
    );
  }
  if (error.kind === "refused" && APPLICATION_REFUSALS.has(error.code)) {
    return checkResult(
      check,
      "fail",
      "credentials",
      `${id}: Loops refused your application (${error.status} ${error.code})`,
      {
        merchantId: id,
        fix: "check the application's approved scopes and standing in the partner portal, and LOOPS_CLIENT_ID/LOOPS_CLIENT_SECRET",
      },
    );
  }
  return checkResult(check, "fail", "finding", `${id}: could not ask Loops: ${error.message}`, {
    merchantId: id,
    fix: "run doctor again; if it persists, see docs/runbook.md",
  });
}
