import { EXIT, type ExitCode } from "../cli-error.ts";

/** How one check ended; `skipped` when a check before it failed and it could not be asked. */
export type CheckStatus = "ok" | "warn" | "fail" | "skipped";

/**
 * What a failed check is about, which decides the exit code (README, "Exit codes"): a bad environment (2),
 * Postgres unreachable or behind (3), Loops refusing the application (4), or a finding about a merchant, a
 * scope, the clock, the forwarding endpoint (1).
 */
export type CheckArea = "environment" | "database" | "credentials" | "finding";

/** One line of `loops-sync doctor`'s checklist (and one element of `--json`'s `checks`). */
export interface DoctorCheck {
  /** Stable name: environment, webhook_secrets, database, standby, migrations, token, clock, connection,
   * scopes, event_log, merchants, revoked_merchants, forwarding, gateway, last_webhook. */
  check: string;
  status: CheckStatus;
  area: CheckArea;
  /** The merchant a per-merchant check is about; null otherwise. */
  merchantId: string | null;
  /** What was found, one line, never a secret. */
  detail: string;
  /** What to do about it; null when nothing needs doing. */
  fix: string | null;
}

/** A check result; `merchantId` and `fix` default to null. */
export function checkResult(
  check: string,
  status: CheckStatus,
  area: CheckArea,
  detail: string,
  { fix = null, merchantId = null }: { fix?: string | null; merchantId?: string | null } = {},
): DoctorCheck {
  return { check, status, area, merchantId, detail, fix };
}

/** The area whose failure decides the exit code when several failed: what blocks the others comes first. */
const AREA_ORDER: readonly CheckArea[] = ["environment", "database", "credentials", "finding"];

const AREA_EXIT: Record<CheckArea, ExitCode> = {
  environment: EXIT.usage,
  database: EXIT.database,
  credentials: EXIT.upstream,
  finding: EXIT.problem,
};

/** 0 when nothing failed (warnings included); else the code of the first failed area in AREA_ORDER. */
export function doctorExitCode(checks: readonly DoctorCheck[]): ExitCode {
  const failed = new Set(checks.filter((c) => c.status === "fail").map((c) => c.area));
  const area = AREA_ORDER.find((a) => failed.has(a));
  return area === undefined ? EXIT.ok : AREA_EXIT[area];
}
