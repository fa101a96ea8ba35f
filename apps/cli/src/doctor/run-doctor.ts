import { createLogger } from "@loops-sync/config";
import { createLoopsClientFromEnv } from "../clients.ts";
import { quietLogger } from "../commands/catchup.ts";
import { checkClock } from "./check-clock.ts";
import { checkDatabase } from "./check-database.ts";
import { checkEnvironment } from "./check-environment.ts";
import { checkForwarding } from "./check-forwarding.ts";
import { checkGateway } from "./check-gateway.ts";
import { checkLastWebhook } from "./check-last-webhook.ts";
import { checkMerchants, type MerchantsChecked } from "./check-merchants.ts";
import { checkToken } from "./check-token.ts";
import { checkWebhookSecrets } from "./check-webhook-secrets.ts";
import { checkResult, type DoctorCheck, doctorExitCode } from "./doctor-check.ts";
import { createLoopsClock } from "./loops-clock.ts";

export interface DoctorOptions {
  source: NodeJS.ProcessEnv;
  /** --merchant: check only this one. */
  merchant?: string | undefined;
  /** --sample: at most this many merchants are asked of Loops. */
  sample: number;
  /** Told after each merchant checked (the progress line). */
  onProgress?: (done: number, total: number) => void;
}

/** `--json`'s document: every check, and what the exit code says. */
export interface DoctorReport {
  generatedAt: string;
  ok: boolean;
  exitCode: number;
  summary: Record<"ok" | "warn" | "fail" | "skipped", number>;
  merchants: MerchantsChecked | null;
  checks: DoctorCheck[];
}

/**
 * The checklist, in the order a deployment depends on it: the environment, Postgres, a token, then what
 * needs all three. What cannot be asked once an earlier check failed is listed as skipped, saying why.
 */
export async function runDoctor(options: DoctorOptions): Promise<DoctorReport> {
  const checks: DoctorCheck[] = [];
  let merchants: MerchantsChecked | null = null;
  const skip = (names: readonly string[], why: string) => {
    for (const name of names) checks.push(checkResult(name, "skipped", "finding", why));
  };
  const { env, checks: envChecks } = checkEnvironment(options.source);
  checks.push(...envChecks);
  if (!env) {
    skip(
      ["webhook_secrets", "database", "token", "clock", "merchants", "forwarding", "last_webhook"],
      "needs a valid environment",
    );
    return report(checks, merchants);
  }
  checks.push(checkWebhookSecrets(env.LOOPS_WEBHOOK_SECRETS));
  const database = await checkDatabase(env);
  checks.push(...database.checks);
  try {
    if (!database.sql || !database.databaseUrl) {
      // The request budget every Loops call waits on is kept in Postgres.
      skip(
        ["token", "clock", "merchants", "last_webhook"],
        "needs Postgres (the shared request budget and the mirror's state are kept there)",
      );
      checks.push(await checkForwarding(env));
      checks.push(await checkGateway(env));
      return report(checks, merchants);
    }
    if (database.standby) {
      // Every Loops call takes the shared request budget, a write the standby refuses.
      skip(["token", "clock", "merchants"], "needs the primary (the shared request budget is written there)");
      checks.push(await checkForwarding(env));
      checks.push(await checkLastWebhook(database.sql));
      return report(checks, merchants);
    }
    const clock = createLoopsClock();
    const logger = quietLogger(createLogger({ name: "doctor", level: env.LOG_LEVEL }), "doctor");
    const client = createLoopsClientFromEnv(env, logger, {
      databaseUrl: database.databaseUrl,
      fetch: clock.fetch,
    });
    const token = await checkToken(client, env);
    checks.push(token);
    if (token.status === "ok") {
      const checked = await checkMerchants(database.sql, client, {
        configured: env.LOOPS_MERCHANT_IDS,
        only: options.merchant,
        sample: options.sample,
        onProgress: options.onProgress,
      });
      merchants = checked.merchants;
      checks.push(...checked.checks);
    } else {
      skip(["merchants"], "needs a token");
    }
    checks.push(checkClock(clock.skewSeconds(), clock.samples(), env.WEBHOOK_TOLERANCE_SECONDS));
    checks.push(await checkForwarding(env));
    checks.push(await checkGateway(env));
    checks.push(await checkLastWebhook(database.sql));
    return report(checks, merchants);
  } finally {
    await database.close();
  }
}

function report(checks: DoctorCheck[], merchants: MerchantsChecked | null): DoctorReport {
  const summary = { ok: 0, warn: 0, fail: 0, skipped: 0 };
  for (const c of checks) summary[c.status]++;
  const exitCode = doctorExitCode(checks);
  return { generatedAt: new Date().toISOString(), ok: exitCode === 0, exitCode, summary, merchants, checks };
}
