import { type Env, maskUrl } from "@loops-sync/config";
import { type LoopsClient, LoopsError } from "@loops-sync/loops-client";
import { checkResult, type DoctorCheck } from "./doctor-check.ts";

/**
 * A token from the client credentials: the first thing every call needs. A refusal names the variables and
 * the token address used (its password masked), never the secret.
 */
export async function checkToken(client: LoopsClient, env: Env): Promise<DoctorCheck> {
  const authUrl = maskUrl(env.LOOPS_AUTH_URL!);
  try {
    await client.authenticate();
    return checkResult(
      "token",
      "ok",
      "credentials",
      `${authUrl} issued a token for LOOPS_CLIENT_ID ${JSON.stringify(env.LOOPS_CLIENT_ID)}`,
    );
  } catch (error) {
    if (!(error instanceof LoopsError)) throw error;
    const refused = error.kind === "refused" || error.kind === "invalid";
    const detail = refused
      ? `${authUrl} refused the client credentials of LOOPS_CLIENT_ID ${JSON.stringify(env.LOOPS_CLIENT_ID)} (${error.status} ${error.code})`
      : `no token from ${authUrl}: ${error.message}`;
    const fix = refused
      ? error.code === "application_suspended"
        ? "the application is suspended: see its standing in the partner portal"
        : "check LOOPS_CLIENT_ID and LOOPS_CLIENT_SECRET against the partner portal: sandbox and production have separate credentials, and LOOPS_AUTH_URL must be the same environment's token address (an old secret stops working 24 h after a rotation)"
      : "check LOOPS_AUTH_URL and that this host reaches it (DNS, firewall, proxy)";
    return checkResult("token", "fail", "credentials", detail, { fix });
  }
}
