import { checkResult, type DoctorCheck } from "./doctor-check.ts";

/** Beyond this, a warning: the margin left before webhooks are refused is shrinking. */
export const CLOCK_WARN_SECONDS = 60;

/**
 * Loops' clock against ours. The receiver refuses a webhook whose `webhook-timestamp` is further than
 * WEBHOOK_TOLERANCE_SECONDS (default 300, the spec's 5 minutes) from our clock, so a skew that large fails
 * every delivery, signed correctly or not.
 */
export function checkClock(
  skewSeconds: number | undefined,
  samples: number,
  toleranceSeconds: number,
): DoctorCheck {
  if (skewSeconds === undefined) {
    return checkResult("clock", "skipped", "finding", "no answer from Loops carried a Date header");
  }
  const off = Math.abs(skewSeconds);
  const rounded = Math.round(off);
  const how =
    rounded === 0
      ? "agrees with ours to the second"
      : `is ${rounded} s ${skewSeconds > 0 ? "ahead of" : "behind"} ours`;
  const detail = `Loops' clock ${how} (the Date header of ${samples} answer(s))`;
  const fix = "synchronise this host's clock with NTP (e.g. `timedatectl set-ntp true`, or chrony)";
  if (off > toleranceSeconds) {
    return checkResult(
      "clock",
      "fail",
      "finding",
      `${detail}: more than the ${toleranceSeconds} s webhooks may be off, so the receiver refuses every signed webhook`,
      { fix },
    );
  }
  if (off > CLOCK_WARN_SECONDS) {
    return checkResult(
      "clock",
      "warn",
      "finding",
      `${detail}: webhooks are refused beyond ${toleranceSeconds} s`,
      { fix },
    );
  }
  return checkResult("clock", "ok", "finding", detail);
}
