import { ConfigError, type Env, loadEnv, type RequiredVariable } from "@loops-sync/config";
import { API_VARIABLES } from "../clients.ts";
import { checkResult, type DoctorCheck } from "./doctor-check.ts";

/** What `loops-sync start` (receiver and worker) cannot run without: doctor holds the environment to it. */
export const SERVICE_VARIABLES: readonly RequiredVariable[] = [...API_VARIABLES, "LOOPS_WEBHOOK_SECRETS"];

/**
 * The environment as the services read it, with their messages (`loadEnv`): a failure names the variable,
 * what it got (a secret's length only) and what it expects.
 */
export function checkEnvironment(source: NodeJS.ProcessEnv): { env: Env | undefined; checks: DoctorCheck[] } {
  let env: Env;
  try {
    env = loadEnv(source, { require: SERVICE_VARIABLES });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return {
      env: undefined,
      checks: [
        checkResult("environment", "fail", "environment", error.message, {
          fix: `set ${error.variable} as README "Configuration" describes, then run doctor again`,
        }),
      ],
    };
  }
  const checks = [
    checkResult(
      "environment",
      "ok",
      "environment",
      `every variable is valid for the receiver and the worker (Loops API ${env.LOOPS_API_URL})`,
    ),
  ];
  if (!env.LOOPS_APPLICATION_ID) {
    checks.push(
      checkResult(
        "environment",
        "warn",
        "environment",
        "LOOPS_APPLICATION_ID unset: events your own application caused are not recognised as self-originated, so each costs a fetch",
        { fix: "set LOOPS_APPLICATION_ID to the application ID shown in the partner portal" },
      ),
    );
  }
  return { env, checks };
}
