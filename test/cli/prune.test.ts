// `loops-sync prune` on a 1,000,000-row sync.events while a real `loops-sync receiver` keeps taking signed
// webhooks: every webhook is acknowledged 2xx and stored, terminal events past the cutoff are gone, and
// pending, failed, recent and still-needed events remain.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { bin, runCli } from "../support/operator-run.ts";
import { deliver, makeEvent, SECRET } from "../support/webhook-fixtures.ts";

const ROWS = 1_000_000;

/** `loops-sync receiver` on a free port; resolves with its address once it logs that it listens. */
function startReceiver(databaseUrl: string) {
  const child = spawn(bin, ["receiver"], {
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      DATABASE_URL: databaseUrl,
      LOOPS_WEBHOOK_SECRETS: SECRET,
      PORT: "0",
      HOST: "127.0.0.1",
      STATUS_PAGE: "false",
      METRICS_PORT: "0",
      LOG_LEVEL: "info",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const url = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stderr! }).on("line", (line) => {
      const entry = JSON.parse(line) as { msg?: string; url?: string };
      if (entry.msg === "receiver listening" && entry.url) resolve(entry.url);
    });
    child.once("exit", (code) => reject(new Error(`receiver exited with ${code} before listening`)));
  });
  return { child, url };
}

describe("loops-sync prune", () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase();
    // Old rows (40–100 days) in every outcome, cycling; the first 1,000 rows are recent (1 hour old).
    await db.sql`
      insert into sync.events (id, type, merchant_id, created_at, received_at, source, payload, outcome)
      select 'evt_gen_' || i, 'order.status_changed', 'mer_gen_' || (i % 10),
             t, t, 'catchup', '{"data":{}}'::jsonb,
             (array['applied','stale','ignored_self','unhandled','skipped_revoked','pending','failed',
                    'applied','applied','applied'])[1 + i % 10]
      from generate_series(1, ${ROWS}) as i,
           lateral (select case when i <= 1000 then now() - interval '1 hour'
                                else now() - interval '40 days' - (i % 5184000) * interval '1 second' end as t) x`;
    // A cursor pointing at an old applied event: catch-up resumes after it, so it must stay.
    await db.sql`insert into sync.merchants (id) values ('mer_gen_1')`;
    await db.sql`insert into sync.cursors (merchant_id, after_event_id) values ('mer_gen_1', 'evt_gen_5001')`;
    await db.sql`vacuum analyze sync.events`;
  }, 600_000);

  afterAll(async () => {
    await db?.drop();
  });

  it("deletes old terminal events in batches while the receiver keeps acknowledging webhooks", async () => {
    const countOld = async (outcomes: string[]) => {
      const [row] = await db.sql<{ n: number }[]>`
        select count(*)::int as n from sync.events
        where id like 'evt_gen_%' and received_at < now() - interval '35 days' and outcome = any(${outcomes})`;
      return row!.n;
    };
    const openBefore = await countOld(["pending", "failed"]);
    const terminalBefore = await countOld([
      "applied",
      "stale",
      "ignored_self",
      "unhandled",
      "skipped_revoked",
    ]);
    expect(openBefore).toBeGreaterThan(150_000);
    expect(terminalBefore).toBeGreaterThan(700_000);

    const receiver = startReceiver(db.url);
    try {
      const url = await receiver.url;
      const prune = runCli(["prune", "--json"], { DATABASE_URL: db.url }, 540_000);
      let pruning = true;
      void prune.finally(() => {
        pruning = false;
      });
      const acks: { id: string; status: number }[] = [];
      while (pruning || acks.length < 50) {
        const batch = Array.from({ length: 5 }, () => makeEvent({ merchant_id: "mer_live" }));
        const answers = await Promise.all(batch.map((e) => deliver(url, e)));
        for (const [i, a] of answers.entries()) acks.push({ id: batch[i]!.id, status: a.status });
        await new Promise((r) => setTimeout(r, 20));
      }
      const result = await prune;
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      const summary = JSON.parse(result.stdout) as {
        eventsDeleted: number;
        eventsKept: number;
        dryRun: boolean;
        batches: number;
      };

      expect(acks.filter((a) => a.status < 200 || a.status >= 300)).toEqual([]);
      const [stored] = await db.sql<{ n: number }[]>`
        select count(*)::int as n from sync.events where id = any(${acks.map((a) => a.id)})`;
      expect(stored!.n).toBe(acks.length);

      expect(await countOld(["applied", "stale", "ignored_self", "unhandled", "skipped_revoked"])).toBe(
        summary.eventsKept,
      );
      expect(summary.eventsDeleted).toBe(terminalBefore - summary.eventsKept);
      expect(summary.batches).toBeGreaterThan(100);
      expect(await countOld(["pending", "failed"])).toBe(openBefore);
      const [recent] = await db.sql<{ n: number }[]>`
        select count(*)::int as n from sync.events where id like 'evt_gen_%' and received_at > now() - interval '2 hours'`;
      expect(recent!.n).toBe(1000);
      const [cursorEvent] = await db.sql`select outcome from sync.events where id = 'evt_gen_5001'`;
      expect(cursorEvent?.outcome).toBe("stale");
    } finally {
      receiver.child.kill("SIGTERM");
    }
  }, 600_000);
});

describe("the worker's daily prune", () => {
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

  it("is on the worker's crontab and prunes with RETENTION_DAYS", async () => {
    await db.sql`
      insert into sync.events (id, type, merchant_id, created_at, received_at, source, payload, outcome)
      select 'evt_cron_' || i, 'order.status_changed', 'mer_cron', now() - d, now() - d, 'catchup', '{}', o
      from (values (1, interval '20 days', 'applied'), (2, interval '20 days', 'failed'),
                   (3, interval '5 days', 'applied'), (4, interval '20 days', 'stale')) as v(i, d, o)`;
    await db.sql`
      insert into replica.changes (resource, resource_id, merchant_id, operation, source, changed_at)
      values ('order', 'ord_cron_1', 'mer_cron', 'insert', 'webhook', now() - interval '20 days'),
             ('order', 'ord_cron_2', 'mer_cron', 'insert', 'webhook', now() - interval '5 days')`;
    await db.sql`
      insert into sync.refused_events (id, merchant_id, source, reason, refused_at)
      values ('evt_refused_old', 'mer_cron', 'catchup', '22P05', now() - interval '20 days'),
             ('evt_refused_new', 'mer_cron', 'catchup', '22P05', now() - interval '5 days')`;
    const worker = spawn(bin, ["worker"], {
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        DATABASE_URL: db.url,
        LOOPS_API_URL: sandbox.apiUrl,
        LOOPS_AUTH_URL: sandbox.authUrl,
        LOOPS_CLIENT_ID: sandbox.credentials.clientId,
        LOOPS_CLIENT_SECRET: sandbox.credentials.clientSecret,
        METRICS_PORT: "0",
        RETENTION_DAYS: "10",
        LOG_LEVEL: "warn",
      },
      stdio: ["ignore", "ignore", "inherit"],
    });
    try {
      await waitFor(
        async () =>
          (await db.sql`select 1 from graphile_worker._private_known_crontabs where identifier = 'prune'`)
            .length > 0,
        { what: "the prune cron registered by the worker" },
      );
      await db.sql`select graphile_worker.add_job('prune', '{}'::json)`;
      await waitFor(
        async () =>
          (await db.sql`select 1 from sync.events where id in ('evt_cron_1', 'evt_cron_4')`).length === 0,
        { what: "the old terminal events pruned by the worker" },
      );
      const left = await db.sql<
        { id: string }[]
      >`select id from sync.events where id like 'evt_cron_%' order by id`;
      expect(left.map((r) => r.id)).toEqual(["evt_cron_2", "evt_cron_3"]);
      await waitFor(
        async () =>
          (await db.sql`select 1 from replica.change_feed_state where pruned_through = 1`).length > 0,
        { what: "the old change pruned by the worker" },
      );
      const changes = await db.sql<{ id: string }[]>`select resource_id as id from replica.changes`;
      expect(changes.map((r) => r.id)).toEqual(["ord_cron_2"]);
      const refused = await db.sql<{ id: string }[]>`select id from sync.refused_events`;
      expect(refused.map((r) => r.id)).toEqual(["evt_refused_new"]);
    } finally {
      worker.kill("SIGTERM");
    }
  }, 120_000);
});
