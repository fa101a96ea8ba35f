// `loops-sync doctor` as a partner runs it before going live: the real command, real Postgres, the sandbox
// over HTTP (with a merchant that withheld a scope, a revoked one, a skewed clock) and a real forwarding
// endpoint. Each failure is named with its fix and its exit code; a healthy setup exits 0.
import { randomBytes } from "node:crypto";
import { DEFAULT_WEBHOOK_SECRET, defaultSeed, type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type ForwardEndpoint, startForwardEndpoint } from "#testkit/forward-endpoint";
import { loopsApiEnv } from "#testkit/processes";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { runCli as runChild } from "../support/operator-run.ts";

// A run loads the whole CLI; on a machine shared by many test processes that alone can take seconds.
const runCli = (args: string[], env: Record<string, string>) => runChild(args, env, 120_000);

interface Check {
  check: string;
  status: "ok" | "warn" | "fail" | "skipped";
  area: string;
  merchantId: string | null;
  detail: string;
  fix: string | null;
}

interface Report {
  ok: boolean;
  exitCode: number;
  merchants: { known: number; checked: number; sampled: boolean; revoked: string[] } | null;
  checks: Check[];
}

/** mer_demo_2 granted every scope but locations:read. */
function seedWithheldScope() {
  const seed = defaultSeed();
  seed.merchants[1]!.grantedScopes = ["orders:read", "events:read"];
  return seed;
}

describe("loops-sync doctor", { timeout: 300_000 }, () => {
  let db: TestDatabase;
  let empty: TestDatabase;
  let sandbox: Sandbox;
  let endpoint: ForwardEndpoint;
  const forwardSecret = `whsec_${randomBytes(32).toString("base64")}`;

  const env = (more: Record<string, string> = {}): Record<string, string> => ({
    ...loopsApiEnv(sandbox),
    DATABASE_URL: db.url,
    LOOPS_WEBHOOK_SECRETS: DEFAULT_WEBHOOK_SECRET,
    LOOPS_MERCHANT_IDS: "mer_demo_1",
    ...more,
  });

  const doctorJson = async (more: Record<string, string> = {}, args: string[] = []) => {
    const r = await runCli(["doctor", "--json", ...args], env(more));
    return { ...r, report: JSON.parse(r.stdout) as Report };
  };

  const find = (report: Report, check: string, merchantId: string | null = null) =>
    report.checks.filter((c) => c.check === check && c.merchantId === merchantId);

  beforeAll(async () => {
    [db, empty, sandbox] = await Promise.all([
      createTestDatabase(),
      createTestDatabase({ empty: true }),
      startSandbox({ port: 0, seed: seedWithheldScope() }),
    ]);
    endpoint = await startForwardEndpoint({ secret: forwardSecret });
  });
  afterAll(async () => {
    await endpoint?.close();
    await sandbox?.close();
    await Promise.all([db?.drop(), empty?.drop()]);
  });
  beforeEach(() => {
    sandbox.setFaults({ clockSkewSeconds: 0 });
    sandbox.resetStats();
  });

  it("passes a healthy setup with exit 0, one call per merchant per check, and a signed test change forwarded", async () => {
    const r = await runCli(["doctor"], env({ FORWARD_URL: endpoint.url, FORWARD_SECRET: forwardSecret }));
    expect(r.stderr).toMatch(/^doctor: checked 1\/1 merchant\(s\)$/m);
    expect({ code: r.code, failed: r.stdout.match(/^fail .*$/gm) }).toEqual({ code: 0, failed: null });
    for (const line of [
      /^ok {4}environment {8}every variable is valid for the receiver and the worker/m,
      /^ok {4}database {11}Postgres at .* answers; the schema is current/m,
      /^ok {4}token {14}http:\/\/127\.0\.0\.1:\d+\/oauth\/token issued a token for LOOPS_CLIENT_ID "sandbox-client"$/m,
      /^ok {4}connection {9}mer_demo_1: connection con_\w+ active, 2 location\(s\) shared$/m,
      /^ok {4}scopes {13}mer_demo_1: grants orders:read, events:read, locations:read$/m,
      /^ok {4}event_log {10}mer_demo_1: the event log answers; no cursor yet/m,
      /^ok {4}clock {14}Loops' clock agrees with ours to the second \(the Date header of \d+ answer\(s\)\)$/m,
      /^ok {4}forwarding {9}http:\/\/127\.0\.0\.1:\d+\/\S* answered a signed test change \(webhook-id chg_0\) with a 2xx$/m,
      /^warn {2}last_webhook {7}no webhook received yet$/m,
      /^doctor: 0 failed, 1 warning\(s\), \d+ ok, 1 skipped; ready, with the warnings above$/m,
    ]) {
      expect(r.stdout).toMatch(line);
    }
    expect(r.stdout).not.toContain("query-token");
    expect(sandbox.stats().apiCalls).toEqual({ "GET /connection": 1, "GET /events": 1 });
    expect(sandbox.stats().tokenRequests).toBe(1);
    const [test] = endpoint.requests;
    expect(endpoint.requests).toHaveLength(1);
    expect(test).toMatchObject({ webhookId: "chg_0", position: 0, signatureValid: true, status: 204 });
  });

  it("prints one JSON document with every check, and names the last webhook and its age", async () => {
    await db.sql`
      insert into sync.events (id, type, merchant_id, created_at, received_at, source, payload)
      values ('evt_doctor_last', 'order.created', 'mer_demo_1', now() - interval '3 minutes',
              now() - interval '3 minutes', 'webhook', '{}')`;
    try {
      const { code, report, stderr } = await doctorJson();
      expect(code).toBe(0);
      expect(stderr).toMatch(/^doctor: checked 1\/1 merchant\(s\)$/m);
      expect(report).toMatchObject({
        ok: true,
        exitCode: 0,
        merchants: { known: 1, checked: 1, sampled: false },
      });
      expect(report.checks.map((c) => c.check)).toEqual([
        "environment",
        "webhook_secrets",
        "database",
        "token",
        "merchants",
        "connection",
        "scopes",
        "event_log",
        "revoked_merchants",
        "clock",
        "forwarding",
        "gateway",
        "last_webhook",
      ]);
      expect(find(report, "last_webhook")).toEqual([
        expect.objectContaining({
          status: "ok",
          detail: "last webhook evt_doctor_last (mer_demo_1) received 3 min ago",
        }),
      ]);
    } finally {
      await db.sql`delete from sync.events where id = 'evt_doctor_last'`;
    }
  });

  it("fails a merchant that withheld a scope, naming what goes unmirrored and the fix (exit 1)", async () => {
    const r = await runCli(["doctor"], env({ LOOPS_MERCHANT_IDS: "mer_demo_1,mer_demo_2" }));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /^fail {2}scopes {13}mer_demo_2: did not grant locations:read \(unmirrored: its locations and their channel connections \(orders are still mirrored\)\)$/m,
    );
    expect(r.stdout).toMatch(
      /^ {25}fix: ask the merchant to grant locations:read to your application, then run `loops-sync refresh --merchant mer_demo_2`$/m,
    );
    expect(r.stdout).toMatch(/^ok {4}scopes {13}mer_demo_1: grants/m);
    expect(r.stderr).toMatch(
      /^loops-sync: doctor: 1 check\(s\) failed \(scopes\); each names its fix above$/m,
    );
  });

  it("fails a clock more than 300 s off (exit 1) and warns beyond 60 s (exit 0)", async () => {
    sandbox.setFaults({ clockSkewSeconds: 400 });
    const skewed = await doctorJson();
    expect(skewed.code).toBe(1);
    expect(find(skewed.report, "clock")).toEqual([
      expect.objectContaining({
        status: "fail",
        detail: expect.stringMatching(
          /^Loops' clock is (399|400|401) s ahead of ours .*: more than the 300 s webhooks may be off, so the receiver refuses every signed webhook$/,
        ),
        fix: expect.stringMatching(/NTP/),
      }),
    ]);

    sandbox.setFaults({ clockSkewSeconds: -90 });
    const behind = await doctorJson();
    expect(behind.code).toBe(0);
    expect(find(behind.report, "clock")).toEqual([
      expect.objectContaining({
        status: "warn",
        detail: expect.stringMatching(/^Loops' clock is (89|90|91) s behind ours/),
      }),
    ]);
  });

  it("fails a catch-up cursor outside the 30-day retention, known locally or refused by Loops (exit 1)", async () => {
    await db.sql`
      insert into sync.cursors (merchant_id, after_event_id, after_created_at)
      values ('mer_demo_1', 'evt_long_gone', now() - interval '31 days')`;
    try {
      const old = await doctorJson();
      expect(old.code).toBe(1);
      expect(find(old.report, "event_log", "mer_demo_1")).toEqual([
        expect.objectContaining({
          status: "fail",
          detail:
            "mer_demo_1: the catch-up cursor evt_long_gone is outside Loops' 30-day event retention (its event is 31 days old): events after it are gone from the log",
          fix: expect.stringContaining("loops-sync catchup --merchant mer_demo_1"),
        }),
      ]);
      expect(sandbox.stats().apiCalls["GET /events"]).toBeUndefined();

      await db.sql`update sync.cursors set after_created_at = now() - interval '1 day' where merchant_id = 'mer_demo_1'`;
      const refused = await doctorJson();
      expect(refused.code).toBe(1);
      expect(find(refused.report, "event_log", "mer_demo_1")).toEqual([
        expect.objectContaining({
          status: "fail",
          detail: expect.stringMatching(
            /cursor evt_long_gone is outside .* \(GET \/events refused it: 400 invalid_request\)/,
          ),
        }),
      ]);
    } finally {
      await db.sql`delete from sync.cursors where merchant_id = 'mer_demo_1'`;
    }
  });

  it("exits 4 when Loops refuses the client credentials, naming both variables and the auth URL, never the secret", async () => {
    const secret = "wrong-secret-7f3a9c";
    const r = await runCli(["doctor"], env({ LOOPS_CLIENT_SECRET: secret }));
    expect(r.code).toBe(4);
    expect(r.stdout).toMatch(
      /^fail {2}token {14}http:\/\/127\.0\.0\.1:\d+\/oauth\/token refused the client credentials of LOOPS_CLIENT_ID "sandbox-client" \(401 unauthorized\)$/m,
    );
    expect(r.stdout).toMatch(/fix: check LOOPS_CLIENT_ID and LOOPS_CLIENT_SECRET against the partner portal/);
    expect(r.stdout).toMatch(/^skip {2}merchants {10}needs a token$/m);
    expect(`${r.stdout}${r.stderr}`).not.toContain(secret);
  });

  it("exits 2 for a malformed webhook secret, with the services' own messages, never the value", async () => {
    const pattern = await runCli(["doctor"], env({ LOOPS_WEBHOOK_SECRETS: "not-a-secret" }));
    expect(pattern.code).toBe(2);
    expect(pattern.stdout).toMatch(
      /^fail {2}environment {8}LOOPS_WEBHOOK_SECRETS: got a value of 12 characters \(hidden\), expected whsec_… values separated by spaces or commas$/m,
    );
    expect(pattern.stdout).toMatch(/^skip {2}database {11}needs a valid environment$/m);

    const base64 = await runCli(
      ["doctor"],
      env({ LOOPS_WEBHOOK_SECRETS: `${DEFAULT_WEBHOOK_SECRET} whsec_abc=def` }),
    );
    expect(base64.code).toBe(2);
    expect(base64.stdout).toMatch(
      /^fail {2}webhook_secrets {4}webhook secret #2 \(13 characters, hidden\) is not whsec_ followed by base64$/m,
    );
    expect(`${pattern.stdout}${base64.stdout}${base64.stderr}`).not.toMatch(/not-a-secret|abc=def/);
  });

  it("exits 3 for a schema behind the code, naming `loops-sync migrate`, and for Postgres unreachable", async () => {
    const behind = await runCli(["doctor"], env({ DATABASE_URL: empty.url }));
    expect(behind.code).toBe(3);
    expect(behind.stdout).toMatch(
      /^fail {2}migrations {9}the database schema is behind: migration 0001_sync\.sql and \d+ more not applied; run `loops-sync migrate`$/m,
    );
    expect(behind.stdout).toMatch(/^skip {2}token {14}needs Postgres/m);
    const [schema] = await empty.sql`select to_regclass('sync.migrations') as t`;
    expect(schema?.t).toBeNull();

    const down = await runCli(["doctor"], env({ DATABASE_URL: "postgres://postgres@127.0.0.1:1/nowhere" }));
    expect(down.code).toBe(3);
    expect(down.stdout).toMatch(/^fail {2}database {11}cannot reach Postgres at 127\.0\.0\.1:1\/nowhere/m);
  });

  it("fails a forwarding endpoint that refuses the signature (exit 1)", async () => {
    const r = await runCli(
      ["doctor"],
      env({ FORWARD_URL: endpoint.url, FORWARD_SECRET: `whsec_${randomBytes(32).toString("base64")}` }),
    );
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /^fail {2}forwarding {9}\S+ did not take a signed test change \(webhook-id chg_0\): HTTP 401/m,
    );
    expect(r.stdout).toMatch(
      /fix: the endpoint refused the signature: give it the same secret as FORWARD_SECRET/,
    );
  });

  it("samples a large deployment (--sample) or checks one merchant (--merchant)", async () => {
    const sampled = await doctorJson({ LOOPS_MERCHANT_IDS: "mer_demo_1,mer_demo_2" }, ["--sample", "1"]);
    expect(sampled.report.merchants).toMatchObject({ known: 2, checked: 1, sampled: true });
    expect(find(sampled.report, "merchants")[0]?.detail).toBe(
      "checking 1 of 2 merchants (configured first, the rest at random)",
    );
    expect(sandbox.stats().apiCalls["GET /connection"]).toBe(1);

    const one = await doctorJson({ LOOPS_MERCHANT_IDS: "mer_demo_1,mer_demo_2" }, [
      "--merchant",
      "mer_demo_2",
    ]);
    expect(one.report.checks.filter((c) => c.merchantId !== null).map((c) => c.merchantId)).toEqual(
      expect.arrayContaining(["mer_demo_2"]),
    );
    expect(find(one.report, "connection", "mer_demo_1")).toEqual([]);
    expect(one.code).toBe(1);

    const typo = await doctorJson({}, ["--merchant", "mer_demo_l"]);
    expect(typo.code).toBe(1);
    expect(find(typo.report, "connection", "mer_demo_l")).toEqual([
      expect.objectContaining({
        status: "fail",
        detail:
          "mer_demo_l: Loops knows no such merchant connected to your application (404 merchant_not_found)",
      }),
    ]);

    const bad = await runCli(["doctor", "--sample", "0"], env());
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(
      /option '--sample <n>' argument '0' is invalid\. expected a whole number of merchants, 1 or more/,
    );
  });
});

describe("loops-sync doctor and revoked merchants", { timeout: 300_000 }, () => {
  let db: TestDatabase;
  let sandbox: Sandbox;

  beforeAll(async () => {
    [db, sandbox] = await Promise.all([createTestDatabase(), startSandbox({ port: 0 })]);
  });
  afterAll(async () => {
    await sandbox?.close();
    await db?.drop();
  });

  it("fails a configured merchant Loops reports revoked, and lists the ones the mirror knows revoked without calling them", async () => {
    sandbox.revokeMerchant("mer_demo_2");
    await db.sql`insert into sync.merchants (id, status, revoked_at, learned_from) values ('mer_left', 'revoked', now(), 'webhook')`;
    const r = await runCli(["doctor", "--json"], {
      ...loopsApiEnv(sandbox),
      DATABASE_URL: db.url,
      LOOPS_WEBHOOK_SECRETS: DEFAULT_WEBHOOK_SECRET,
      LOOPS_MERCHANT_IDS: "mer_demo_1 mer_demo_2",
    });
    expect(r.code).toBe(1);
    const report = JSON.parse(r.stdout) as Report;
    expect(report.checks.filter((c) => c.check === "connection" && c.status === "fail")).toEqual([
      expect.objectContaining({
        merchantId: "mer_demo_2",
        detail: "mer_demo_2: revoked its connection to your application (403 connection_not_active)",
        fix: "remove mer_demo_2 from LOOPS_MERCHANT_IDS, or ask the merchant to connect your application again",
      }),
    ]);
    expect(report.merchants).toMatchObject({ known: 3, checked: 2, revoked: ["mer_left"] });
    expect(report.checks.find((c) => c.check === "revoked_merchants")).toMatchObject({
      status: "warn",
      detail: "1 merchant(s) revoked their connection, not called: mer_left",
    });
    // Two configured merchants, one call each for the connection, one event-log call for the active one.
    expect(sandbox.stats().apiCalls).toEqual({ "GET /connection": 2, "GET /events": 1 });
  });
});
