import { pendingMigrations, type Sql, withTimeout } from "@loops-sync/db";

/** Why a process is not alive or not ready: a stable `code` and a sentence for the operator. */
export interface HealthProblem {
  code: string;
  detail: string;
}

/** A part of the process (the receiver, the worker) that can break or be not ready on its own. */
export interface HealthPart {
  /** A problem that only a restart cures (e.g. the worker's runner stopped by itself). */
  live?: () => HealthProblem | undefined;
  /** A problem that keeps it from taking work for now. */
  ready?: () => HealthProblem | undefined;
}

export interface ProcessHealth {
  /** Undefined while the process is alive; otherwise why it should be restarted. */
  liveness(): HealthProblem | undefined;
  /** Undefined while the process can take work; otherwise why not (it asks Postgres). */
  readiness(): Promise<HealthProblem | undefined>;
  addPart(part: HealthPart): void;
  /** From now on the process is shutting down: not ready. */
  stopping(): void;
  close(): void;
}

export interface ProcessHealthOptions {
  sql: Sql;
  /** Postgres unreachable this long makes the process not alive. */
  graceSeconds: number;
  /** How often Postgres is asked `select 1`. Default: 5000 ms (a third of the grace, if that is shorter). */
  probeEveryMs?: number;
  /** Longest wait for an answer from Postgres. Default: 2000 ms. */
  timeoutMs?: number;
}

const reasonOf = (error: unknown) => (error as { code?: string }).code ?? (error as Error).message;

/**
 * Liveness and readiness of one process. A watchdog asks Postgres regularly: a short outage only makes the
 * process not ready, one longer than the grace period makes it not alive, so an orchestrator restarts it
 * (a process stuck on a dead pool or a half-open socket comes back clean).
 */
export function createProcessHealth({
  sql,
  graceSeconds,
  probeEveryMs = Math.min(5000, (graceSeconds * 1000) / 3),
  timeoutMs = 2000,
}: ProcessHealthOptions): ProcessHealth {
  const parts: HealthPart[] = [];
  let lastAnswerAt = Date.now();
  let lastError = "";
  let shuttingDown = false;
  const probe = async () => {
    try {
      await withTimeout(sql`select 1`, timeoutMs);
      lastAnswerAt = Date.now();
    } catch (error) {
      lastError = reasonOf(error);
    }
  };
  const timer = setInterval(() => void probe(), probeEveryMs);
  timer.unref();

  function liveness(): HealthProblem | undefined {
    for (const part of parts) {
      const problem = part.live?.();
      if (problem) return problem;
    }
    const silentFor = (Date.now() - lastAnswerAt) / 1000;
    if (silentFor > graceSeconds) {
      return {
        code: "database_lost",
        detail: `Postgres has not answered for ${Math.round(silentFor)} s (grace ${graceSeconds} s): ${lastError}`,
      };
    }
    return undefined;
  }

  async function readiness(): Promise<HealthProblem | undefined> {
    if (shuttingDown) return { code: "shutting_down", detail: "the process is shutting down" };
    const dead = liveness();
    if (dead) return dead;
    for (const part of parts) {
      const problem = part.ready?.();
      if (problem) return problem;
    }
    try {
      const pending = await withTimeout(
        (async () => {
          await sql`select 1`;
          return await pendingMigrations(sql);
        })(),
        timeoutMs,
      );
      lastAnswerAt = Date.now();
      if (pending.length > 0) {
        return {
          code: "migrations_pending",
          detail: `run loops-sync migrate; pending: ${pending.join(", ")}`,
        };
      }
      return undefined;
    } catch (error) {
      return { code: "database_unavailable", detail: `the database does not answer (${reasonOf(error)})` };
    }
  }

  return {
    liveness,
    readiness,
    addPart: (part) => void parts.push(part),
    stopping: () => {
      shuttingDown = true;
    },
    close: () => clearInterval(timer),
  };
}
