import type { MigrationPlan, PlannedStep } from "@loops-sync/db";

type StepLock = PlannedStep["locks"][number];

/** `ACCESS EXCLUSIVE on sync.merchants, brief: alter table … add column` */
function describeLock(l: StepLock): string {
  const on = l.table ? ` on ${l.table}` : l.lock === "none" ? " on existing tables" : "";
  const lock = l.lock === "none" ? "no lock" : l.lock === "unknown" ? "unknown lock" : l.lock;
  return `${lock}${on}${l.holds ? `, ${l.holds}` : ""}: ${l.statement}`;
}

/**
 * `migrate --plan` as text: per pending step, a line naming it and how it runs, then a line per statement with
 * the lock it takes. Empty plan: one line saying so.
 */
export function describeMigrationPlan(plan: MigrationPlan): string[] {
  if (plan.steps.length === 0) return ["migrations: up to date"];
  const lines = [`migrations: ${plan.steps.length} pending step(s) in ${plan.pending.length} file(s)`];
  for (const step of plan.steps) {
    lines.push(`${step.migration} step ${step.step}/${step.steps} (${step.mode}): ${step.description}`);
    for (const lock of step.locks) lines.push(`  ${describeLock(lock)}`);
  }
  return lines;
}

/** `migrate --check` when behind: one line per pending file, with the steps left of a partly applied one. */
export function describePendingFiles(plan: MigrationPlan): string[] {
  return plan.pending.map((name) => {
    const steps = plan.steps.filter((s) => s.migration === name);
    const total = steps[0]?.steps ?? 0;
    const left =
      steps.length < total ? ` (steps ${steps.map((s) => s.step).join(", ")} of ${total} left)` : "";
    return `pending: ${name}${left}`;
  });
}
