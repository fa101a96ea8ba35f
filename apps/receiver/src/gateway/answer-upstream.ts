import type { Logger } from "@loops-sync/config";
import type { ForwardResult } from "@loops-sync/loops-client";
import { problemResponse } from "../problem-response.ts";
import type { GatewayOutcome } from "./gateway-metrics.ts";
import type { GatewayRoute } from "./gateway-routes.ts";
import type { WriteMirror } from "./write-mirror.ts";

/** Says whether the answer's resource is in the mirror now (`true`) or will come with the reconcile (`false`). */
export const MIRRORED_HEADER = "loops-sync-mirrored";

const unavailable = (status: 502 | 504, detail: string) =>
  problemResponse({ status, code: "upstream_unavailable", title: "Upstream unavailable", detail });

export interface AnswerOptions {
  write: GatewayRoute;
  merchantId: string | undefined;
  mirror: WriteMirror;
  logger: Logger;
}

/**
 * The backend's answer for what Loops did: Loops' own status, body, Retry-After and request id as they came
 * (4xx and 5xx included, never retried), after a 2xx's resource is applied to the mirror; a timeout or a
 * broken connection as 504 or 502 `upstream_unavailable` (Loops may have applied it: the backend's retry with
 * the same Idempotency-Key is safe). A mirror that cannot commit does not hide Loops' 2xx: the answer says
 * `loops-sync-mirrored: false` and the reconcile brings the change.
 */
export async function answerUpstream(
  result: Exclude<ForwardResult, { kind: "no_budget" }>,
  { write, merchantId, mirror, logger }: AnswerOptions,
): Promise<{ outcome: GatewayOutcome; response: Response }> {
  switch (result.kind) {
    case "timeout":
      return {
        outcome: "timeout",
        response: unavailable(
          504,
          "Loops did not answer in time; it may have applied the write: retry with the same Idempotency-Key",
        ),
      };
    case "network":
      return {
        outcome: "network",
        response: unavailable(
          502,
          "the connection to Loops failed; it may have applied the write: retry with the same Idempotency-Key",
        ),
      };
    case "no_token":
      return {
        outcome: "no_token",
        response: unavailable(
          502,
          "loops-sync got no token from Loops for its own credentials; nothing was sent (run loops-sync doctor)",
        ),
      };
  }
  const { status, headers, body } = result;
  const ok = status >= 200 && status < 300;
  let outcome: GatewayOutcome =
    status === 429 ? "rate_limited" : status >= 500 ? "upstream_error" : ok ? "not_mirrored" : "refused";
  const answerHeaders: Record<string, string> = { ...headers };
  if (ok) {
    let mirrored = false;
    try {
      mirrored = await mirror({ kind: write.kind, merchantId, resource: JSON.parse(body) as unknown });
    } catch (error) {
      // Loops applied the write; the reconcile brings it. Only the route and the error's class are logged.
      const { name, code } = error as { name?: string; code?: string };
      logger.warn({ route: write.route, error: name, code }, "gateway: the write could not be mirrored");
    }
    if (mirrored) outcome = "mirrored";
    answerHeaders[MIRRORED_HEADER] = String(mirrored);
  }
  return { outcome, response: new Response(body, { status, headers: answerHeaders }) };
}
