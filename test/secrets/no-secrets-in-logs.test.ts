// No secret in any log line. This suite runs its own noisy scenario first (receiver and worker children at
// LOG_LEVEL=trace, tokens expiring, forged and mis-signed webhooks, a wrong client secret, bad secrets and a
// password in the environment), then reads EVERY file under .reports/logs/ — the children of the chaos,
// hostile and multi-process suites and their in-process pino files included — and fails on any client
// secret, webhook secret (whsec_ value or its key), bearer token or database password found there.
// Run it after the other suites for full coverage: `vitest run test/chaos test/hostile test/multiprocess`
// then `vitest run test/secrets`.

import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import {
  DEFAULT_SANDBOX_CREDENTIALS,
  DEFAULT_WEBHOOK_SECRET,
  type Sandbox,
  startSandbox,
} from "@loops-sync/sandbox";
import { signWebhook } from "@loops-sync/webhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOG_DIR, loopsSyncEnv, ProcessGroup, receiverUrlOf, recordSecrets } from "#testkit/processes";
import { waitFor } from "#testkit/wait-for";
import { chaosSeed } from "../support/chaos-seed.ts";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

const RUN_ID = `secrets-${randomBytes(4).toString("hex")}`;
const DB_PASSWORD = `dbpw${randomBytes(10).toString("hex")}`;
/** Bearer tokens the sandbox and the hostile upstream issue; any of them in a log is a leak. */
const TOKEN_PATTERNS = [/sbxat_[0-9a-f]{16,}/, /hostile_at_[0-9a-z]{8,}/, /Bearer\s+[A-Za-z0-9._~+/=-]{12,}/];

/** The secret itself, and for whsec_ values also the base64 key and the raw key text. */
function forms(secret: string): string[] {
  if (!secret.startsWith("whsec_")) return [secret];
  const key = secret.slice("whsec_".length);
  const raw = Buffer.from(key, "base64").toString("latin1");
  return [secret, key, ...(/^[\x20-\x7e]{12,}$/.test(raw) ? [raw] : [])];
}

/** One entry per secret or token found in `text`, naming the file and line but not the secret. */
function findLeaks(file: string, text: string, secrets: ReadonlySet<string>): string[] {
  const leaks: string[] = [];
  text.split("\n").forEach((line, n) => {
    for (const secret of secrets) {
      if (line.includes(secret))
        leaks.push(`${file}:${n + 1}: a secret (${secret.slice(0, 4)}…, ${secret.length} chars)`);
    }
    for (const pattern of TOKEN_PATTERNS) {
      const match = pattern.exec(line);
      if (match) leaks.push(`${file}:${n + 1}: a bearer token (${match[0].slice(0, 10)}…)`);
    }
  });
  return leaks;
}

describe("no secret in any log line", () => {
  const procs = new ProcessGroup();
  const world = chaosSeed({ merchants: 2, label: "secrets" });
  const wrongClientSecret = `wrong-client-secret-${randomBytes(10).toString("hex")}`;
  const issued: string[] = [];
  let db: TestDatabase;
  let sandbox: Sandbox;

  beforeAll(async () => {
    db = await createTestDatabase();
    sandbox = await startSandbox({ seed: world.seed, timeScale: 20 });
    recordSecrets(RUN_ID, [
      world.credentials.clientSecret,
      world.webhookSecret,
      wrongClientSecret,
      DB_PASSWORD,
    ]);
    const env = loopsSyncEnv({
      databaseUrl: db.url,
      api: sandbox,
      credentials: world.credentials,
      webhookSecrets: [world.webhookSecret],
      logLevel: "trace",
      extra: { LOOPS_MERCHANT_IDS: world.merchantIds.join(",") },
    });
    const receiver = procs.spawn({ name: `${RUN_ID}-receiver`, args: ["receiver"], env });
    const worker = procs.spawn({ name: `${RUN_ID}-worker`, args: ["worker"], env });
    const url = await receiverUrlOf(receiver);
    await worker.waitForLine(/"msg":"worker started"/);
    sandbox.addWebhookEndpoint({ url: `${url}/webhooks/loops`, secrets: [world.webhookSecret] });

    // Tokens that die early, 429s and 5xx: the worker refreshes and retries, and logs about it.
    sandbox.setFaults({
      seed: 5,
      tokenTtlSeconds: 20,
      api429Rate: 0.1,
      api5xxRate: 0.1,
      webhookDuplicateRate: 0.2,
    });
    for (let i = 0; i < 6; i++) sandbox.createOrder({ merchantId: world.merchantIds[i % 2]! });
    sandbox.expireTokens();
    // A token of our own, from the token endpoint: it must not show up anywhere either.
    const response = await fetch(sandbox.authUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "client_credentials",
        client_id: world.credentials.clientId,
        client_secret: world.credentials.clientSecret,
      }),
    });
    const { access_token } = (await response.json()) as { access_token: string };
    issued.push(access_token);
    // Forged webhooks: signed with the wrong secret, carrying a token and a secret in their own bodies'
    // headers, so a receiver that logs raw headers on refusal would leak them.
    for (let i = 0; i < 5; i++) {
      const body = JSON.stringify({ id: `evt_forged_${i}`, type: "order.created" });
      const headers = signWebhook({
        id: `evt_forged_${i}`,
        timestamp: Math.floor(Date.now() / 1000),
        body,
        secrets: [DEFAULT_WEBHOOK_SECRET],
      });
      await fetch(`${url}/webhooks/loops`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${access_token}`, ...headers },
        body,
      });
    }
    await waitFor(
      async () => {
        const [row] = await db.sql<{ n: number }[]>`
          select count(*)::int as n from sync.events where outcome <> 'pending'`;
        return (row?.n ?? 0) >= 6;
      },
      { timeoutMs: 30_000, what: "the orders' events to be processed" },
    );

    // A worker with a wrong client secret, alone, so it must ask for a token and be refused.
    await worker.kill("SIGTERM");
    const wrong = procs.spawn({
      name: `${RUN_ID}-worker-wrong-secret`,
      args: ["worker"],
      env: { ...env, LOOPS_CLIENT_SECRET: wrongClientSecret },
    });
    await wrong.waitForLine(/"msg":"worker started"/);
    sandbox.createOrder({ merchantId: world.merchantIds[0]! });
    await wrong.waitForLine(/401|unauthori[sz]ed|invalid_client/i, 20_000);
    await wrong.kill("SIGTERM");
    const badWebhookSecret = procs.spawn({
      name: `${RUN_ID}-receiver-bad-secret`,
      args: ["receiver"],
      env: { ...env, LOOPS_WEBHOOK_SECRETS: `${world.webhookSecret},not-a-whsec-${wrongClientSecret}` },
    });
    await badWebhookSecret.exited;
    const unreachable = procs.spawn({
      name: `${RUN_ID}-worker-db-password`,
      args: ["worker"],
      env: { ...env, DATABASE_URL: `postgres://loops:${DB_PASSWORD}@127.0.0.1:1/loops` },
    });
    await unreachable.exited;
    for (const p of procs.running()) await p.kill("SIGTERM");
  }, 120_000);

  afterAll(async () => {
    await procs.killAll();
    await sandbox?.close();
    await db?.drop();
  }, 30_000);

  it("spots a planted secret and token (the scan itself works)", () => {
    const line = `{"msg":"oops","x":"${world.credentials.clientSecret}","auth":"Bearer ${issued[0]}"}`;
    expect(findLeaks("planted.log", line, new Set(forms(world.credentials.clientSecret)))).toHaveLength(3);
  });

  it("finds no client secret, webhook secret, bearer token or database password in any log file", () => {
    const files = readdirSync(LOG_DIR).filter((f) => f.endsWith(".log"));
    const secrets = new Set<string>([
      DEFAULT_SANDBOX_CREDENTIALS.clientSecret,
      ...forms(DEFAULT_WEBHOOK_SECRET),
      ...issued,
      ...readdirSync(LOG_DIR)
        .filter((f) => f.endsWith(".secrets.json"))
        .flatMap((f) => (JSON.parse(readFileSync(path.join(LOG_DIR, f), "utf8")) as string[]).flatMap(forms)),
    ]);
    const leaks = files.flatMap((file) =>
      findLeaks(file, readFileSync(path.join(LOG_DIR, file), "utf8"), secrets),
    );
    console.log(
      `secrets: scanned ${files.length} log files for ${secrets.size} secrets and ${TOKEN_PATTERNS.length} token patterns`,
    );
    // This suite's own noisy children must be among the files scanned.
    expect(files.filter((f) => f.startsWith(RUN_ID)).length).toBeGreaterThanOrEqual(5);
    expect(leaks).toEqual([]);
  });
});
