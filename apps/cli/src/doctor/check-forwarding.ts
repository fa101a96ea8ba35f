import { type Env, version } from "@loops-sync/config";
import { decodeWebhookSecrets } from "@loops-sync/webhooks";
import { sendChange } from "@loops-sync/worker";
import { checkResult, type DoctorCheck } from "./doctor-check.ts";

/**
 * Position 0 precedes every change (positions start at 1), so a receiver that skips what it has already
 * passed, as examples/forward-receiver does, answers 2xx and applies nothing; its webhook-id is `chg_0`.
 */
export const TEST_POSITION = 0;

/** The test change: a row of replica.changes in shape, about nothing. */
export function testChangeBody(now: Date): string {
  return JSON.stringify({
    position: TEST_POSITION,
    resource: "test",
    resource_id: "loops-sync-doctor",
    merchant_id: null,
    operation: "test",
    version: null,
    previous_version: null,
    status: null,
    previous_status: null,
    source: "doctor",
    event_id: null,
    changed_at: now.toISOString(),
    data: null,
  });
}

/** When FORWARD_URL is set: one test change, signed and sent exactly as the worker sends a change. */
export async function checkForwarding(env: Env): Promise<DoctorCheck> {
  if (!env.FORWARD_URL) {
    return checkResult("forwarding", "skipped", "finding", "FORWARD_URL unset: forwarding is off");
  }
  // FORWARD_URL may carry a token: only its origin and path are shown.
  const { origin, pathname } = new URL(env.FORWARD_URL);
  const shown = `${origin}${pathname}`;
  let keys: Buffer[];
  try {
    // Several secrets (rotation) sign every request, as the worker signs them.
    keys = decodeWebhookSecrets(env.FORWARD_SECRET!.split(/\s+/).filter(Boolean));
  } catch (error) {
    return checkResult("forwarding", "fail", "environment", `FORWARD_SECRET: ${(error as Error).message}`, {
      fix: "set FORWARD_SECRET to whsec_ followed by the base64 of the key your endpoint verifies with",
    });
  }
  const result = await sendChange(TEST_POSITION, testChangeBody(new Date()), {
    url: env.FORWARD_URL,
    keys,
    timeoutMs: env.FORWARD_TIMEOUT_MS,
    userAgent: `loops-sync/${version} doctor`,
  });
  if (result.ok) {
    return checkResult(
      "forwarding",
      "ok",
      "finding",
      `${shown} answered a signed test change (webhook-id chg_0) with a 2xx`,
    );
  }
  const signatureRefused = /^HTTP 40[13]\b/.test(result.error);
  return checkResult(
    "forwarding",
    "fail",
    "finding",
    `${shown} did not take a signed test change (webhook-id chg_0): ${result.error}`,
    {
      fix: signatureRefused
        ? "the endpoint refused the signature: give it the same secret as FORWARD_SECRET"
        : result.kind === "status"
          ? "the endpoint must answer 2xx to a change it has already passed (position 0); see examples/forward-receiver"
          : `make the endpoint reachable from this host within FORWARD_TIMEOUT_MS (${env.FORWARD_TIMEOUT_MS} ms)`,
    },
  );
}
