import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { DEFAULT_WEBHOOK_SECRET, type Sandbox } from "@loops-sync/sandbox";
import { freePort } from "#testkit/free-port";
import { loopsApiEnv } from "#testkit/processes";
import { waitFor } from "#testkit/wait-for";

const bin = path.resolve(import.meta.dirname, "../../bin/loops-sync");

export interface StartedLoopsSync {
  /** The receiver's base address (the webhook listener, PORT). */
  base: string;
  /** The admin listener's base address (ADMIN_PORT): /metrics, /status, /healthz, /readyz. */
  admin: string;
  child: ChildProcess;
  /** Everything the process printed so far. */
  output(): string;
}

/**
 * Spawns `loops-sync start` configured only through the public env names, pointed at `sandbox`, with stdout
 * and stderr piped. Default ports: 0 (any free one).
 */
export function spawnStart({
  databaseUrl,
  sandbox,
  port = 0,
  adminPort = 0,
  env = {},
}: {
  databaseUrl: string;
  sandbox: Sandbox;
  port?: number;
  adminPort?: number;
  env?: Record<string, string>;
}): ChildProcess {
  return spawn(bin, ["start"], {
    env: {
      PATH: process.env.PATH ?? "",
      DATABASE_URL: databaseUrl,
      ...loopsApiEnv(sandbox),
      LOOPS_WEBHOOK_SECRETS: DEFAULT_WEBHOOK_SECRET,
      PORT: String(port),
      HOST: "127.0.0.1",
      ADMIN_PORT: String(adminPort),
      LOG_LEVEL: "info",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/**
 * `loops-sync start` as an operator runs it: a child process configured only through the public env names,
 * pointed at `sandbox`, with the sandbox's webhooks pointed back at it. Resolves once /readyz answers 200.
 */
export async function startLoopsSync({
  databaseUrl,
  sandbox,
  env = {},
  webhooks = true,
}: {
  databaseUrl: string;
  sandbox: Sandbox;
  /** More variables (ADMIN_TOKEN, CATCHUP_CRON, …). Default: none. */
  env?: Record<string, string>;
  /** Point the sandbox's webhooks at it. Default: true. */
  webhooks?: boolean;
}): Promise<StartedLoopsSync> {
  const port = await freePort();
  const adminPort = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const admin = `http://127.0.0.1:${adminPort}`;
  let output = "";
  const child = spawnStart({ databaseUrl, sandbox, port, adminPort, env });
  child.stdout!.on("data", (d) => (output += d));
  child.stderr!.on("data", (d) => (output += d));
  await waitFor(async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.ok, {
    timeoutMs: 60_000,
    what: `/readyz to answer 200 (output so far: ${output.slice(-500)})`,
  });
  if (webhooks) {
    sandbox.addWebhookEndpoint({ url: `${base}/webhooks/loops`, secrets: [DEFAULT_WEBHOOK_SECRET] });
  }
  return { base, admin, child, output: () => output };
}
