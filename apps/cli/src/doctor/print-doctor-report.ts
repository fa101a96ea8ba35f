import type { DoctorReport } from "./run-doctor.ts";

// The longest check name, so the details line up.
const WIDTH = "revoked_merchants".length + 2;

/** The checklist on stdout: one line per check, `ok`/`warn`/`fail`/`skip`, and the fix under it. */
export function printDoctorReport(report: DoctorReport): void {
  const lines: string[] = [];
  for (const c of report.checks) {
    const status = c.status === "skipped" ? "skip" : c.status;
    lines.push(`${status.padEnd(5)} ${c.check.padEnd(WIDTH)}${c.detail}`);
    if (c.fix && c.status !== "skipped") lines.push(`${" ".repeat(6 + WIDTH)}fix: ${c.fix}`);
  }
  const s = report.summary;
  lines.push(
    `doctor: ${s.fail} failed, ${s.warn} warning(s), ${s.ok} ok, ${s.skipped} skipped` +
      (report.ok ? (s.warn > 0 ? "; ready, with the warnings above" : "; ready to go live") : ""),
  );
  process.stdout.write(`${lines.join("\n")}\n`);
}

/** The progress line on stderr: rewritten in place on a terminal, about ten lines otherwise. */
export function progressLine(
  stream: NodeJS.WriteStream = process.stderr,
): (done: number, total: number) => void {
  return (done, total) => {
    const text = `doctor: checked ${done}/${total} merchant(s)`;
    if (stream.isTTY) {
      stream.write(`\r${text}${done === total ? "\n" : ""}`);
      return;
    }
    const step = Math.max(1, Math.ceil(total / 10));
    if (done === total || done % step === 0) stream.write(`${text}\n`);
  };
}
