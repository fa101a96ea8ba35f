import { decodeWebhookSecret } from "@loops-sync/webhooks";
import { checkResult, type DoctorCheck } from "./doctor-check.ts";

/** Loops (like every Standard Webhooks signer) issues keys of 24 bytes or more; a shorter one was cut short. */
export const MIN_SECRET_BYTES = 24;

/**
 * LOOPS_WEBHOOK_SECRETS beyond the variable's pattern: each decodes as the receiver decodes it (a failure is
 * the receiver's own message at start), none is shorter than a real key or listed twice, and how many are
 * accepted: more than one means a rotation is under way. Secrets are named by position, never shown.
 */
export function checkWebhookSecrets(secrets: readonly string[]): DoctorCheck {
  const keys: Buffer[] = [];
  for (const [i, secret] of secrets.entries()) {
    try {
      keys.push(decodeWebhookSecret(secret, i));
    } catch (error) {
      return checkResult("webhook_secrets", "fail", "environment", (error as Error).message, {
        fix: "copy the endpoint's signing secret from the partner portal again, whole (whsec_ and the base64 after it), into LOOPS_WEBHOOK_SECRETS",
      });
    }
  }
  const short = keys.findIndex((k) => k.length < MIN_SECRET_BYTES);
  if (short >= 0) {
    return checkResult(
      "webhook_secrets",
      "warn",
      "environment",
      `webhook secret #${short + 1} decodes to ${keys[short]!.length} bytes, fewer than the ${MIN_SECRET_BYTES} Loops issues: was it cut short when pasted?`,
      { fix: "compare it with the endpoint's signing secret in the partner portal" },
    );
  }
  const distinct = new Set(keys.map((k) => k.toString("base64")));
  if (distinct.size < keys.length) {
    return checkResult(
      "webhook_secrets",
      "warn",
      "environment",
      `LOOPS_WEBHOOK_SECRETS lists the same secret twice (${keys.length} given, ${distinct.size} different)`,
      { fix: "during a rotation list the old and the new secret once each" },
    );
  }
  const detail =
    keys.length === 1
      ? "1 webhook secret, well formed"
      : `${keys.length} webhook secrets, well formed, all accepted: a rotation is under way`;
  return checkResult("webhook_secrets", "ok", "environment", detail, {
    fix:
      keys.length === 1
        ? null
        : "once Loops signs with the new secret only (24 h after the rotation), remove the old one from LOOPS_WEBHOOK_SECRETS",
  });
}
