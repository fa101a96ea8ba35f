import type { Sql, TransactionSql } from "@loops-sync/db";
import type { PauseCause, UpstreamFailure } from "./classify-upstream-failure.ts";

/**
 * The pause of calls to Loops, as one state machine held in `sync.upstream_pauses` (every process sees it).
 * A scope is `application` (every call) or `merchant:<id>` (that merchant's calls):
 *
 *   running ──enterPause──▶ paused ──claimDueProbe──▶ probing ──probeAccepted──▶ running
 *                             ▲                          │
 *                             └────────probeRefused──────┘   (the wait doubles, up to the maximum)
 *
 * While a scope is paused, `sync.paused_until(merchant)` answers a time in the future: jobs and order
 * batches wait instead of calling, and no event is failed. Only these functions write the table.
 */

/** A paused scope: `application`, or `merchant:<id>`. */
export type PauseScope = "application" | `merchant:${string}`;

export interface UpstreamPause {
  scope: PauseScope;
  cause: PauseCause;
  /** The refusal as Loops worded it (no credentials: the client's errors never carry them). */
  detail: string | null;
  /** The merchant whose call was refused: the probe calls for it. */
  merchantId: string;
  /** The refused call's route (e.g. `/events`): the probe calls it. Null: unknown (GET /orders is probed). */
  route: string | null;
  pausedAt: Date;
  probeAt: Date;
  /** Probes refused so far. */
  probes: number;
}

/** How long a paused scope waits between probes. */
export interface PauseBackoff {
  /** Wait before the first probe; each refused probe doubles it. Default: 30 s. */
  firstSeconds: number;
  /** The longest wait. Default: 900 s (15 min). */
  maxSeconds: number;
}

export const DEFAULT_PAUSE_BACKOFF: PauseBackoff = { firstSeconds: 30, maxSeconds: 900 };

/** A probe not answered (accepted or refused) within this long is given to the next process. */
const PROBE_LEASE_SECONDS = 120;

type Db = Sql | TransactionSql;

/** The scope a `paused` failure holds for a call made for `merchantId`. */
export function pauseScopeOf(
  failure: Extract<UpstreamFailure, { kind: "paused" }>,
  merchantId: string,
): PauseScope {
  return failure.scope === "application" ? "application" : `merchant:${merchantId}`;
}

/**
 * running → paused: holds every call of the scope until a probe is accepted. An existing pause is kept as
 * it is (its backoff goes on). Returns until when callers should wait (the next probe).
 */
export async function enterPause(
  sql: Db,
  failure: Extract<UpstreamFailure, { kind: "paused" }>,
  merchantId: string,
  backoff: PauseBackoff = DEFAULT_PAUSE_BACKOFF,
): Promise<Date> {
  const [row] = await sql<{ probe_at: Date }[]>`
    insert into sync.upstream_pauses as p (scope, cause, detail, merchant_id, probe_at, route)
    values (${pauseScopeOf(failure, merchantId)}, ${failure.cause}, ${failure.message.slice(0, 500)},
            ${merchantId}, now() + make_interval(secs => ${backoff.firstSeconds}), ${failure.route ?? null})
    on conflict (scope) do update set probe_at = p.probe_at
    returning probe_at`;
  return row!.probe_at;
}

/**
 * paused → probing: takes the due pause whose probe no process runs now, the application's first (a
 * merchant's probe would only meet the application's refusal). One probe at a time per scope.
 */
export async function claimDueProbe(sql: Db): Promise<UpstreamPause | undefined> {
  const [row] = await sql<PauseRow[]>`
    update sync.upstream_pauses set probing_until = now() + make_interval(secs => ${PROBE_LEASE_SECONDS})
    where scope = (
      select scope from sync.upstream_pauses
      where probe_at <= now() and (probing_until is null or probing_until < now())
        and (scope = 'application' or not exists (select 1 from sync.upstream_pauses where scope = 'application'))
      order by scope = 'application' desc, probe_at
      limit 1 for update skip locked)
    returning *`;
  return row ? fromRow(row) : undefined;
}

/** probing → running: the probe's call was answered; everything queued for the scope resumes. */
export async function probeAccepted(sql: Db, scope: PauseScope): Promise<void> {
  await sql`delete from sync.upstream_pauses where scope = ${scope}`;
}

/**
 * probing → paused, waiting twice as long as before (up to `backoff.maxSeconds`): the probe was refused
 * (`cause` is the new refusal's) or got no answer (a network error: the cause stays).
 */
export async function probeRefused(
  sql: Db,
  scope: PauseScope,
  backoff: PauseBackoff = DEFAULT_PAUSE_BACKOFF,
  refusal?: { cause: PauseCause; message: string },
): Promise<Date | undefined> {
  const [row] = await sql<{ probe_at: Date }[]>`
    update sync.upstream_pauses
    set probes = probes + 1,
        probe_at = now() + make_interval(secs => least(${backoff.maxSeconds}::float8,
                     ${backoff.firstSeconds}::float8 * power(2, probes + 1))),
        probing_until = null,
        cause = coalesce(${refusal?.cause ?? null}, cause),
        detail = coalesce(${refusal?.message.slice(0, 500) ?? null}, detail)
    where scope = ${scope}
    returning probe_at`;
  return row?.probe_at;
}

/** Every paused scope, the application's first. */
export async function listPauses(sql: Db): Promise<UpstreamPause[]> {
  const rows = await sql<PauseRow[]>`
    select * from sync.upstream_pauses order by scope = 'application' desc, scope`;
  return rows.map(fromRow);
}

interface PauseRow {
  scope: PauseScope;
  cause: PauseCause;
  detail: string | null;
  merchant_id: string;
  route: string | null;
  paused_at: Date;
  probe_at: Date;
  probes: number;
}

function fromRow(r: PauseRow): UpstreamPause {
  return {
    scope: r.scope,
    cause: r.cause,
    detail: r.detail,
    merchantId: r.merchant_id,
    route: r.route,
    pausedAt: r.paused_at,
    probeAt: r.probe_at,
    probes: r.probes,
  };
}
