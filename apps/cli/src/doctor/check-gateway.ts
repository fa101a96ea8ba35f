import type { Env } from "@loops-sync/config";
import { checkResult, type DoctorCheck } from "./doctor-check.ts";

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

/**
 * When GATEWAY_TOKEN is set: a read of a written path through the gateway of the process on ADMIN_PORT must
 * answer 405 (the gateway is on, takes this token, and sends nothing to Loops for it). Warns when no process
 * answers yet, when only this host can reach it, and when ADMIN_TOKEN is the same token (the backend could
 * then read /status and /metrics too).
 */
export async function checkGateway(env: Env): Promise<DoctorCheck> {
  if (!env.GATEWAY_TOKEN) {
    return checkResult("gateway", "skipped", "finding", "GATEWAY_TOKEN unset: the gateway is off");
  }
  if (env.ADMIN_TOKEN === env.GATEWAY_TOKEN) {
    return checkResult("gateway", "warn", "environment", "ADMIN_TOKEN and GATEWAY_TOKEN are the same token", {
      fix: "give the backend a GATEWAY_TOKEN of its own: with ADMIN_TOKEN it can read /status and /metrics",
    });
  }
  const host = env.ADMIN_HOST === "0.0.0.0" || env.ADMIN_HOST === "::" ? "127.0.0.1" : env.ADMIN_HOST;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${env.ADMIN_PORT}/loops/v1/locations/loc_doctor`;
  let status: number;
  try {
    const response = await fetch(url, {
      headers: { authorization: `Bearer ${env.GATEWAY_TOKEN}` },
      signal: AbortSignal.timeout(5000),
    });
    status = response.status;
    await response.body?.cancel();
  } catch {
    return checkResult(
      "gateway",
      "warn",
      "finding",
      `no process answers on ADMIN_PORT ${env.ADMIN_PORT} yet`,
      {
        fix: "start `loops-sync receiver` or `start` with this GATEWAY_TOKEN, then run doctor again",
      },
    );
  }
  if (status === 401) {
    return checkResult(
      "gateway",
      "fail",
      "finding",
      `the gateway on ADMIN_PORT ${env.ADMIN_PORT} refuses this GATEWAY_TOKEN`,
      {
        fix: "give the running receiver and doctor the same GATEWAY_TOKEN",
      },
    );
  }
  if (status !== 405) {
    return checkResult(
      "gateway",
      "fail",
      "finding",
      `the process on ADMIN_PORT ${env.ADMIN_PORT} serves no gateway (HTTP ${status})`,
      {
        fix: "restart `loops-sync receiver` or `start` with GATEWAY_TOKEN set",
      },
    );
  }
  if (LOOPBACK.has(env.ADMIN_HOST)) {
    return checkResult("gateway", "warn", "finding", `the gateway answers, on ${env.ADMIN_HOST} only`, {
      fix: "a backend on another host needs ADMIN_HOST on a private network (docs/gateway.md)",
    });
  }
  return checkResult(
    "gateway",
    "ok",
    "finding",
    `the gateway on ADMIN_PORT ${env.ADMIN_PORT} answers this token`,
  );
}
