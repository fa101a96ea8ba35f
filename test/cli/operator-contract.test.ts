// What an operator's scripts rely on, run through the real `loops-sync` against real Postgres and the
// sandbox over HTTP: only `migrate` changes the schema, stdout carries only the output, `--json` shapes,
// and the documented exit codes.
import { spawn } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { defaultSeed, type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "#testkit/free-port";
import { loopsApiEnv } from "#testkit/processes";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { bin, runCli } from "../support/operator-run.ts";
import { makeOrders } from "../support/sandbox-orders.ts";

const BEHIND =
  /^loops-sync: the database schema is behind: migration 0001_sync\.sql and \d+ more not applied; run `loops-sync migrate`$/;

function apiEnv(sandbox: Sandbox, secret = sandbox.credentials.clientSecret): Record<string, string> {
  return { ...loopsApiEnv(sandbox), LOOPS_CLIENT_SECRET: secret };
}

describe("loops-sync against a schema that is behind", () => {
  let empty: TestDatabase;
  let sandbox: Sandbox;

  beforeAll(async () => {
    empty = await createTestDatabase({ empty: true });
    sandbox = await startSandbox({ port: 0 });
  });
  afterAll(async () => {
    await sandbox?.close();
    await empty?.drop();
  });

  // Eleven CLI processes one after another: a loaded machine needs longer than the 30 s default.
  it("read-only, operator and service verbs exit 3 naming the migration and never create the schema", {
    timeout: 120_000,
  }, async () => {
    const env = { DATABASE_URL: empty.url, LOOPS_WEBHOOK_SECRETS: "whsec_dGVzdA==", ...apiEnv(sandbox) };
    const verbs = [
      ["status"],
      ["status", "--json"],
      ["verify"],
      ["catchup"],
      ["prune", "--dry-run"],
      ["replay", "evt_x"],
      ["receiver"],
      ["worker"],
    ];
    for (const args of verbs) {
      const r = await runCli(args, { ...env, PORT: "0", METRICS_PORT: "0" });
      expect({ args, code: r.code, stderr: r.stderr.trim(), stdout: r.stdout }).toEqual({
        args,
        code: 3,
        stderr: expect.stringMatching(BEHIND),
        stdout: "",
      });
    }
    const [schema] =
      await empty.sql`select count(*)::int as n from pg_namespace where nspname in ('sync', 'replica', 'graphile_worker')`;
    expect(schema?.n).toBe(0);

    const [schemaAfter] = await empty.sql`select to_regclass('sync.migrations') as t`;
    expect(schemaAfter?.t).toBeNull();

    const migrated = await runCli(["migrate"], env);
    expect(migrated.code).toBe(0);
    expect(migrated.stdout).toMatch(/^migrations: applied 0001_sync\.sql, /);
    expect((await runCli(["status"], env)).code).toBe(0);

    await empty.sql`update sync.migrations set checksum = 'deadbeef' where name = '0002_replica_orders.sql'`;
    const edited = await runCli(["status"], env);
    expect(edited.code).toBe(3);
    expect(edited.stderr.trim()).toBe(
      "loops-sync: migration 0002_replica_orders.sql was edited after it was applied; restore the file and put the change in a new migration",
    );
  });
});

describe("a service with LOOPS_SYNC_MIGRATE_ON_START=true", () => {
  let empty: TestDatabase;
  beforeAll(async () => {
    empty = await createTestDatabase({ empty: true });
  });
  afterAll(async () => {
    await empty?.drop();
  });

  it("migrates before it listens", async () => {
    const child = spawn(bin, ["receiver"], {
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        DATABASE_URL: empty.url,
        LOOPS_SYNC_MIGRATE_ON_START: "true",
        LOOPS_WEBHOOK_SECRETS: "whsec_dGVzdA==",
        PORT: "0",
        HOST: "127.0.0.1",
        LOG_LEVEL: "info",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    try {
      const lines: string[] = [];
      await new Promise<void>((resolve, reject) => {
        createInterface({ input: child.stderr! }).on("line", (line) => {
          lines.push(line);
          if (line.includes('"msg":"receiver listening"')) resolve();
        });
        child.once("exit", (code) => reject(new Error(`receiver exited with ${code}: ${lines.join("\n")}`)));
      });
      expect(lines.some((l) => l.includes('"msg":"migrations applied"'))).toBe(true);
      const [row] = await empty.sql`select count(*)::int as n from sync.migrations`;
      expect(row?.n).toBeGreaterThan(0);
    } finally {
      child.kill("SIGTERM");
    }
  });
});

describe("loops-sync operator output and exit codes", () => {
  let db: TestDatabase;
  let sandbox: Sandbox;
  let env: Record<string, string>;
  const merchant = "mer_demo_1";

  beforeAll(async () => {
    db = await createTestDatabase();
    sandbox = await startSandbox({ port: 0 });
    makeOrders(sandbox, merchant, 6);
    env = { DATABASE_URL: db.url, ...apiEnv(sandbox) };
  });
  afterAll(async () => {
    await sandbox?.close();
    await db?.drop();
  });

  it("catchup --json: stdout is one JSON document, the logs go to stderr", async () => {
    const r = await runCli(["catchup", "--merchant", merchant, "--json"], { ...env, LOG_LEVEL: "debug" });
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout) as {
      merchants: { merchantId: string; status: string; eventsStored: number; refused: boolean }[];
      eventsStored: number;
      apiCalls: number;
      failed: string[];
    };
    expect(result.merchants).toEqual([
      expect.objectContaining({ merchantId: merchant, status: "ok", refused: false }),
    ]);
    expect(result.eventsStored).toBeGreaterThan(0);
    expect(result.failed).toEqual([]);
    expect(r.stderr).toMatch(/"msg":"catch-up done"/);
  });

  it("verify, backfill, replay and redeliver --json print their documented shapes", async () => {
    const verify = await runCli(["verify", "--merchant", merchant, "--json"], env);
    expect(verify.code).toBe(0);
    expect(JSON.parse(verify.stdout)).toMatchObject({
      merchants: [{ merchantId: merchant, ordersUpstream: 6, differences: [], repaired: 0, refused: false }],
      differences: [],
      remaining: 0,
    });

    const backfill = await runCli(["backfill", "--merchant", "mer_demo_2", "--json"], env);
    expect(backfill.code).toBe(0);
    expect(JSON.parse(backfill.stdout)).toMatchObject({ merchantId: "mer_demo_2", resumed: false });

    const [event] = await db.sql<{ id: string; type: string }[]>`
      select id, type from sync.events where merchant_id = ${merchant} order by id limit 1`;
    const replay = await runCli(["replay", event!.id, "--json"], env);
    expect(replay.code).toBe(0);
    expect(JSON.parse(replay.stdout)).toEqual({
      eventId: event!.id,
      type: event!.type,
      merchantId: merchant,
      previousOutcome: expect.any(String),
      outcome: "pending",
      queued: true,
      merchantRevoked: false,
    });

    const redeliver = await runCli(["redeliver", event!.id, "--json"], env);
    expect(redeliver.code).toBe(0);
    expect(JSON.parse(redeliver.stdout)).toEqual({ eventId: event!.id, merchantId: merchant, queued: true });
  });

  it("status --json shows table sizes; status exits 1 when something needs attention", async () => {
    await db.sql`update sync.events set outcome = 'applied' where outcome = 'pending'`;
    await db.sql`delete from graphile_worker._private_jobs`;
    // The feed is not empty even when this test runs alone (catch-up above writes changes too).
    await db.sql`
      insert into replica.changes (resource, resource_id, merchant_id, operation, source)
      values ('order', 'ord_status', ${merchant}, 'insert', 'cli')`;
    const ok = await runCli(["status", "--json"], env);
    expect(ok.stderr).toBe("");
    expect(ok.code).toBe(0);
    const snapshot = JSON.parse(ok.stdout) as {
      tables: { table: string; totalBytes: number; estimatedRows: number | null }[];
      attention: unknown[];
      changeFeed: { headPosition: number | null; oldestPosition: number | null; prunedThrough: number };
    };
    expect(snapshot.tables.map((t) => t.table)).toContain("sync.events");
    expect(snapshot.tables.map((t) => t.table)).toContain("replica.changes");
    const [feed] = await db.sql<{ head: number | null; oldest: number | null }[]>`
      select max(position) as head, min(position) as oldest from replica.changes`;
    expect(snapshot.changeFeed).toMatchObject({
      headPosition: feed!.head,
      oldestPosition: feed!.oldest,
      prunedThrough: 0,
    });
    expect(feed!.head).toBeGreaterThan(0);
    expect(snapshot.tables.every((t) => t.totalBytes > 0)).toBe(true);
    expect(snapshot.attention).toEqual([]);

    await db.sql`
      insert into sync.events (id, type, merchant_id, created_at, received_at, source, payload, outcome)
      values ('evt_waiting', 'order.created', ${merchant}, now(), now() - interval '10 minutes', 'cli', '{}', 'pending')`;
    const late = await runCli(["status", "--json"], env);
    expect(late.code).toBe(1);
    expect(JSON.parse(late.stdout).attention).toEqual([
      {
        kind: "lag",
        merchantId: merchant,
        detail: expect.stringMatching(/oldest pending event has waited 6\d\d s/),
      },
    ]);
    expect(late.stderr.trim()).toBe("loops-sync: status: 1 thing(s) need attention (see above)");
    expect((await runCli(["status", "--max-lag", "3600"], env)).code).toBe(0);
    expect((await runCli(["status", "--max-lag", "60"], env)).code).toBe(1);

    await db.sql`update sync.events set outcome = 'failed' where id = 'evt_waiting'`;
    await db.sql`
      insert into sync.merchants (id, status, revoked_at) values ('mer_demo_3', 'revoked', now())
      on conflict (id) do update set status = 'revoked', revoked_at = now()`;
    const text = await runCli(["status"], env);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/^tables: sync\.events \d/m);
    expect(text.stdout).toMatch(
      new RegExp(
        `^change feed: head position ${feed!.head} \\(written .+\\), oldest retained ${feed!.oldest}, pruned through 0, \\d+ change\\(s\\), \\d+ kB$`,
        "m",
      ),
    );
    expect(text.stdout).toMatch(/^needs attention: mer_demo_1 has 1 failed event\(s\)/m);
    expect(text.stdout).toMatch(/^needs attention: mer_demo_3 revoked the connection/m);
  });
});

describe("loops-sync when Loops refuses us", () => {
  let db: TestDatabase;
  let sandbox: Sandbox;

  beforeAll(async () => {
    db = await createTestDatabase();
    sandbox = await startSandbox({ port: 0 });
  });
  afterAll(async () => {
    await sandbox?.close();
    await db?.drop();
  });

  const refused =
    /^loops-sync: (catchup|verify): Loops refused us \(.*\); check LOOPS_CLIENT_ID\/LOOPS_CLIENT_SECRET/;

  it("a 401 on the token (wrong secret) exits 4 for catchup and verify", async () => {
    const env = { DATABASE_URL: db.url, ...apiEnv(sandbox, "not-the-secret") };
    for (const verb of ["catchup", "verify"]) {
      const r = await runCli([verb, "--merchant", "mer_demo_1"], env);
      expect({ verb, code: r.code }).toEqual({ verb, code: 4 });
      expect(r.stderr.trim().split("\n").at(-1)).toMatch(refused);
      expect(r.stderr).toContain("401");
      expect(r.stderr).not.toContain("not-the-secret");
    }
  });

  it("an application suspended by Loops exits 4", async () => {
    const id = sandbox.credentials.applicationId;
    await fetch(`${sandbox.url}/admin/applications/${id}/suspend`, { method: "POST" });
    try {
      const r = await runCli(["catchup", "--merchant", "mer_demo_1", "--json"], {
        DATABASE_URL: db.url,
        ...apiEnv(sandbox),
      });
      expect(r.code).toBe(4);
      expect(JSON.parse(r.stdout).merchants[0]).toMatchObject({ status: "failed", refused: true });
      expect(r.stderr).toContain("application_suspended");
    } finally {
      await fetch(`${sandbox.url}/admin/applications/${id}/resume`, { method: "POST" });
    }
  });

  it("an application without the scope (403 insufficient_scope) exits 4", async () => {
    const seed = defaultSeed();
    seed.applications[0]!.scopes = ["merchants:read"];
    const narrow = await startSandbox({ port: 0, seed });
    try {
      const r = await runCli(["verify", "--merchant", "mer_demo_1"], {
        DATABASE_URL: db.url,
        ...apiEnv(narrow),
      });
      expect(r.code).toBe(4);
      expect(r.stderr).toContain("insufficient_scope");
    } finally {
      await narrow.close();
    }
  });
});

describe("loops-sync settings", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("a bad CATCHUP_CRON stops worker and start with exit 2 before anything listens", async () => {
    const sandbox = await startSandbox({ port: 0 });
    try {
      for (const verb of ["worker", "start"]) {
        const r = await runCli([verb], {
          DATABASE_URL: db.url,
          ...apiEnv(sandbox),
          LOOPS_WEBHOOK_SECRETS: "whsec_dGVzdA==",
          CATCHUP_CRON: "every now and then",
          PORT: String(await freePort()),
          METRICS_PORT: "0",
          LOG_LEVEL: "info",
        });
        expect({ verb, code: r.code, stdout: r.stdout }).toEqual({ verb, code: 2, stdout: "" });
        expect(r.stderr.trim()).toBe(
          'loops-sync: CATCHUP_CRON: got "every now and then", expected a cron schedule of 5 fields like "*/5 * * * *" (minute hour day-of-month month day-of-week)',
        );
      }
    } finally {
      await sandbox.close();
    }
  });

  it("LOOPS_SYNC_EMBEDDED_POSTGRES=false makes an unset DATABASE_URL a config error", async () => {
    const r = await runCli(["receiver"], {
      LOOPS_SYNC_EMBEDDED_POSTGRES: "false",
      LOOPS_WEBHOOK_SECRETS: "whsec_dGVzdA==",
    });
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toMatch(
      /^loops-sync: DATABASE_URL: got nothing \(unset\), expected a postgres:\/\/ connection URL/,
    );
  });

  it("a service on the embedded database says so in one warning line", async () => {
    // A data directory that cannot be created: the warning comes first, then the start fails in one line.
    const r = await runCli(["receiver"], {
      LOOPS_WEBHOOK_SECRETS: "whsec_dGVzdA==",
      LOOPS_SYNC_DATA_DIR: "/dev/null/loops-sync",
      LOG_LEVEL: "warn",
    });
    expect(r.stderr).toContain("ENOTDIR");
    expect(r.code).toBe(3);
    const warnings = r.stderr.split("\n").filter((l) => l.includes("DATABASE_URL unset"));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!).msg).toBe(
      "DATABASE_URL unset: embedded PostgreSQL under /dev/null/loops-sync — for trials; set DATABASE_URL for production",
    );
  });

  it("reads .env from the working directory; the environment wins over it", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "loops-sync-env-"));
    await writeFile(path.join(dir, ".env"), `DATABASE_URL=${db.url}\nCATCHUP_CRON=sometimes\n`);
    const fromFile = await runCli(["status"], {}, 30_000, dir);
    expect(fromFile.code).toBe(2);
    expect(fromFile.stderr).toMatch(/^loops-sync: CATCHUP_CRON: got "sometimes"/);
    const overridden = await runCli(["status", "--json"], { CATCHUP_CRON: "*/5 * * * *" }, 30_000, dir);
    expect(overridden.code).toBe(0);
    expect(JSON.parse(overridden.stdout).merchants).toEqual([]);
  });
});
