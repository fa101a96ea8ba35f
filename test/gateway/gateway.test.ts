// The gateway as a partner's backend meets it: `loops-sync start` with GATEWAY_TOKEN, the sandbox over HTTP,
// real Postgres. Each write's resource is in the mirror when its answer arrives; what the gateway refuses, and
// what the budget has no room for, never reaches the sandbox (counted there); nothing the backend sent shows in
// the process's output.
import { type ChildProcess, execFile, spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { promisify } from "node:util";
import { DEFAULT_WEBHOOK_SECRET, type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loopsApiEnv } from "#testkit/processes";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { type StartedLoopsSync, startLoopsSync } from "../support/loops-sync-start.ts";
import { importedMenu } from "../support/menu-fixtures.ts";

const TOKEN = "gw-test-token-0123456789abcdef";
const BIN = new URL("../../bin/loops-sync", import.meta.url).pathname;
const EMAIL = "owner.gateway.secret@example.com";
const PHONE = "+966512345678";
const DOCUMENT_MARKER = "GATEWAY-DOCUMENT-BODY-7f3a";
const hours = (opens: string) =>
  Object.fromEntries(
    ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"].map((d) => [
      d,
      [{ opens, closes: "23:00" }],
    ]),
  );

describe("the gateway on the admin listener of loops-sync start", () => {
  let db: TestDatabase;
  let sandbox: Sandbox;
  let service: StartedLoopsSync;
  /** The merchant created through the gateway (its business profile is a draft: documents may be uploaded). */
  let createdId: string;
  /** Writes the sandbox received: only the gateway writes (the worker only reads), so no other work counts. */
  const sent = () =>
    Object.entries(sandbox.stats().apiCalls)
      .filter(([route]) => !route.startsWith("GET "))
      .reduce((a, [, n]) => a + n, 0);
  const gateway = (path: string, init: RequestInit & { merchant?: string | null } = {}) => {
    const { merchant = "mer_demo_1", ...rest } = init;
    const headers = new Headers(rest.headers);
    if (!headers.has("authorization")) headers.set("authorization", `Bearer ${TOKEN}`);
    if (merchant) headers.set("service-merchant-id", merchant);
    if (typeof rest.body === "string" && !headers.has("content-type"))
      headers.set("content-type", "application/json");
    return fetch(`${service.admin}/loops/v1${path}`, { ...rest, headers });
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    sandbox = await startSandbox({ jobStepMs: 200 });
    service = await startLoopsSync({
      databaseUrl: db.url,
      sandbox,
      env: {
        GATEWAY_TOKEN: TOKEN,
        LOOPS_MERCHANT_IDS: "mer_demo_1",
        LOG_LEVEL: "debug",
        WORKER_CONCURRENCY: "4",
      },
    });
    // The start's reconcile has mirrored the seeded locations (their status is the read shape's).
    await waitFor(
      async () => (await db.sql`select 1 from replica.locations where id = 'loc_demo_1a'`).length > 0,
      { what: "the first reconcile to mirror loc_demo_1a", timeoutMs: 30_000 },
    );
  }, 90_000);

  afterAll(async () => {
    (service?.child as ChildProcess | undefined)?.kill("SIGTERM");
    await new Promise((r) => service?.child.once("exit", r));
    await sandbox?.close();
    await db?.drop();
  });

  it("mirrors a location PATCH before answering: the new hours are in replica.locations with a write change", async () => {
    const [before] = await db.sql<
      { status: string }[]
    >`select status from replica.locations where id = 'loc_demo_1a'`;
    const key = randomUUID();
    const response = await gateway("/locations/loc_demo_1a", {
      method: "PATCH",
      body: JSON.stringify({ opening_hours: hours("07:15") }),
      headers: { "idempotency-key": key },
    });
    // Read at once: no wait between the answer and the query.
    const [row] = await db.sql<{ status: string; hours: unknown; updated_at: Date }[]>`
      select status, raw -> 'opening_hours' as hours, updated_at from replica.locations where id = 'loc_demo_1a'`;
    expect(response.status).toBe(200);
    expect(response.headers.get("loops-sync-mirrored")).toBe("true");
    expect(response.headers.get("x-request-id")).toMatch(/^req_/);
    const body = (await response.json()) as { opening_hours: unknown; updated_at: string };
    expect(body.opening_hours).toEqual(hours("07:15"));
    expect(row!.hours).toEqual(hours("07:15"));
    expect(row!.updated_at.toISOString()).toBe(new Date(body.updated_at).toISOString());
    // The write shape has no status: the stored one stays.
    expect(row!.status).toBe(before!.status);
    const changes = await db.sql`
      select source, operation from replica.changes where resource = 'location' and resource_id = 'loc_demo_1a'
      order by position desc limit 1`;
    expect(changes).toEqual([{ source: "write", operation: "update" }]);
  });

  it("keeps the written hours through a reconcile of the same revision, writing no change", async () => {
    const [{ top } = { top: 0 }] = await db.sql<{ top: number }[]>`
      select coalesce(max(position), 0)::int as top from replica.changes`;
    await db.sql`
      select graphile_worker.add_job('reconcile_merchant', json_build_object('merchantId', 'mer_demo_1'),
                                     job_key => 'reconcile:mer_demo_1')`;
    await waitFor(
      async () =>
        (await db.sql`select 1 from graphile_worker.jobs where task_identifier = 'reconcile_merchant'`)
          .length === 0,
      { what: "the reconcile to run", timeoutMs: 30_000 },
    );
    const [row] = await db.sql`select raw -> 'opening_hours' as hours, raw ->> 'status' as status
      from replica.locations where id = 'loc_demo_1a'`;
    expect(row!.hours).toEqual(hours("07:15"));
    expect(row!.status).toEqual(expect.any(String));
    const after = await db.sql`
      select source from replica.changes where resource = 'location' and resource_id = 'loc_demo_1a'
        and position > ${top}`;
    expect(after).toEqual([]);
  });

  it("leaves the self-originated webhook that follows ignored_self, with no call for it", async () => {
    const event = await waitFor(
      async () =>
        (
          await db.sql<{ outcome: string }[]>`
            select outcome from sync.events where type = 'location.updated' and location_id = 'loc_demo_1a'`
        )[0],
      { what: "the location.updated webhook to be stored" },
    );
    expect(event.outcome).toBe("ignored_self");
    const jobs = await db.sql`
      select 1 from graphile_worker.jobs where task_identifier = 'refresh_locations'`;
    expect(jobs).toEqual([]);
  });

  it("knows a merchant created through it at once, learned from the gateway, then syncs it", async () => {
    const response = await gateway("/merchants", {
      method: "POST",
      merchant: null,
      body: JSON.stringify({
        external_ref: "gw-merchant-1",
        name: { en: "Gateway Cafe", ar: "مقهى" },
        owner: { name: "Huda", email: EMAIL, phone: PHONE },
      }),
    });
    const created = (await response.json()) as { id: string };
    createdId = created.id;
    const [merchant] = await db.sql`select id, status from replica.merchants where id = ${created.id}`;
    const [state] = await db.sql`select status, learned_from from sync.merchants where id = ${created.id}`;
    expect(response.status).toBe(201);
    expect(merchant).toEqual({ id: created.id, status: "active" });
    // Active at once; named first by the gateway, or by its own merchant.created webhook if that won the race.
    expect(state).toMatchObject({
      status: "active",
      learned_from: expect.stringMatching(/^(gateway|webhook)$/),
    });
    // Synced like one of LOOPS_MERCHANT_IDS: its connection is mirrored by the reconcile started for it.
    await waitFor(
      async () =>
        (await db.sql`select 1 from replica.connections where merchant_id = ${created.id}`).length > 0,
      { what: "the new merchant's connection to be mirrored", timeoutMs: 30_000 },
    );
  });

  it("mirrors the job a menu import starts and follows it to its end, menu included", async () => {
    const response = await gateway("/brands/brd_demo_1/menu", {
      method: "PUT",
      body: JSON.stringify(importedMenu("gw")),
    });
    const job = (await response.json()) as { id: string; status: string };
    const [mirrored] = await db.sql`select status from replica.jobs where id = ${job.id}`;
    expect(response.status).toBe(202 === response.status ? 202 : response.status);
    expect(response.ok).toBe(true);
    expect(mirrored).toEqual({ status: job.status });
    await waitFor(
      async () =>
        (await db.sql`select 1 from replica.jobs where id = ${job.id} and status = 'succeeded'`).length > 0,
      { what: "the import job to be followed to succeeded", timeoutMs: 45_000 },
    );
    await waitFor(
      async () =>
        (
          await db.sql`
            select 1 from replica.menu_products where brand_id = 'brd_demo_1' and external_ref = 'kebab-gw'`
        ).length > 0,
      { what: "the imported menu to be mirrored", timeoutMs: 30_000 },
    );
  }, 90_000);

  it("mirrors a sandbox order it creates", async () => {
    const response = await gateway("/sandbox/orders", {
      method: "POST",
      body: JSON.stringify({ location_id: "loc_demo_1a" }),
    });
    const order = (await response.json()) as { id: string; version: number };
    const [row] = await db.sql`select version from replica.orders where id = ${order.id}`;
    expect(response.status).toBe(201);
    expect(row).toEqual({ version: order.version });
  });

  it("passes a document upload on as multipart, unlogged", async () => {
    const form = new FormData();
    form.set("type", "vat_certificate");
    const pdf = new TextEncoder().encode(`%PDF-1.4\n${DOCUMENT_MARKER}\n%%EOF`);
    form.set("file", new Blob([pdf], { type: "application/pdf" }), "vat.pdf");
    const response = await gateway("/merchant/business-profile/documents", {
      method: "POST",
      body: form,
      merchant: createdId,
    });
    expect(response.status).toBeLessThan(300);
    expect(((await response.json()) as { type: string }).type).toBe("vat_certificate");
  });

  it("passes Loops' 4xx back unchanged, with its request id", async () => {
    const response = await gateway("/locations/loc_nope", {
      method: "PATCH",
      body: JSON.stringify({ opening_hours: hours("08:00") }),
    });
    const body = (await response.json()) as { code: string; request_id: string; type: string };
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    expect(body.code).toBe("not_found");
    expect(response.headers.get("x-request-id")).toBe(body.request_id);
    expect(body.type).toContain(new URL(sandbox.url).host);
    expect(response.headers.get("loops-sync-mirrored")).toBeNull();
  });

  it("sends nothing for a missing or wrong token, a read, an unknown route or an oversized body", async () => {
    const before = sent();
    const patch = { method: "PATCH", body: JSON.stringify({ opening_hours: hours("06:00") }) };
    const none = await gateway("/locations/loc_demo_1a", { ...patch, headers: { authorization: "" } });
    const wrong = await gateway("/locations/loc_demo_1a", {
      ...patch,
      headers: { authorization: `Bearer ${TOKEN}x` },
    });
    const read = await gateway("/locations/loc_demo_1a");
    const orders = await gateway("/orders");
    const redeliver = await gateway("/events/evt_1/redeliver", { method: "POST" });
    const dotted = await gateway("/locations/..%2Forders", patch);
    const menu = await gateway("/brands/brd_demo_1/menu", { method: "PUT", body: "x".repeat(5_000_001) });
    const form = new FormData();
    form.set("type", "vat_certificate");
    form.set("file", new Blob([new Uint8Array(4_000_001)], { type: "application/pdf" }), "big.pdf");
    const document = await gateway("/merchant/business-profile/documents", {
      method: "POST",
      body: form,
      merchant: createdId,
    });
    expect([none.status, wrong.status]).toEqual([401, 401]);
    expect(((await none.json()) as { code: string }).code).toBe("unauthorized");
    expect(none.headers.get("content-type")).toBe("application/problem+json");
    expect(read.status).toBe(405);
    expect(read.headers.get("allow")).toBe("PATCH");
    expect([orders.status, redeliver.status, dotted.status]).toEqual([404, 404, 404]);
    expect(menu.status).toBe(413);
    expect(document.status).toBe(413);
    expect(((await document.json()) as { code: string }).code).toBe("invalid_file");
    // The webhook port serves the webhook and health only.
    const webhookPort = await fetch(`${service.base}/loops/v1/locations/loc_demo_1a`, {
      ...patch,
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    });
    expect(webhookPort.status).toBe(404);
    expect(sent()).toBe(before);
  });

  it("answers 429 rate_limited with Retry-After and sends nothing when the budget has no room", async () => {
    // Every slot of the window spent, and the window moved 3 s ahead: no process gets a token for 3 s.
    await db.sql`
      update sync.request_budget
      set slot = floor(extract(epoch from clock_timestamp()) * 20)::bigint + 60, used = array_fill(100000, array[24])
      where name = 'loops'`;
    const before = sent();
    const response = await gateway("/locations/loc_demo_1b", {
      method: "PATCH",
      body: JSON.stringify({ opening_hours: hours("10:00") }),
    });
    const body = (await response.json()) as { code: string; status: number };
    expect(response.status).toBe(429);
    expect(body).toMatchObject({ code: "rate_limited", status: 429 });
    expect(response.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(sent()).toBe(before);
  });

  it("counts writes by route and outcome, and the budget calls, on /metrics", async () => {
    const text = await (await fetch(`${service.admin}/metrics`)).text();
    expect(text).toMatch(
      /loops_sync_gateway_writes_total\{route="\/locations\/\{location_id\}",outcome="mirrored"\} 1/,
    );
    expect(text).toMatch(
      /loops_sync_gateway_writes_total\{route="\/locations\/\{location_id\}",outcome="no_budget"\} 1/,
    );
    expect(text).toMatch(/loops_sync_gateway_writes_total\{route="other",outcome="unauthorized"\} 2/);
    expect(text).toMatch(/loops_sync_gateway_budget_calls_total\{route="\/merchants"\} 1/);
  });

  it("shows what the writes mirrored in the last hour in status --json, by resource", () => {
    const run = spawnSync(BIN, ["status", "--json"], {
      env: { PATH: process.env.PATH ?? "", DATABASE_URL: db.url },
      encoding: "utf8",
    });
    const { gatewayWrites } = JSON.parse(run.stdout) as {
      gatewayWrites: { resource: string; changes: number }[];
    };
    expect(gatewayWrites).toEqual(
      expect.arrayContaining([
        { resource: "location", changes: 1 },
        { resource: "job", changes: 1 },
        { resource: "order", changes: 1 },
      ]),
    );
  });

  it("is checked by doctor: the running gateway answers this token, and refuses another", async () => {
    // Not spawnSync: doctor asks the sandbox, which runs in this process.
    const doctor = async (token: string) => {
      const run = await promisify(execFile)(BIN, ["doctor", "--json"], {
        env: {
          PATH: process.env.PATH ?? "",
          DATABASE_URL: db.url,
          ...loopsApiEnv(sandbox),
          LOOPS_WEBHOOK_SECRETS: DEFAULT_WEBHOOK_SECRET,
          GATEWAY_TOKEN: token,
          ADMIN_PORT: new URL(service.admin).port,
        },
        encoding: "utf8",
        timeout: 60_000,
      }).catch((error: { stdout: string }) => error);
      const { checks } = JSON.parse(run.stdout) as {
        checks: { check: string; status: string; detail: string }[];
      };
      return checks.find((c) => c.check === "gateway");
    };
    expect(await doctor(TOKEN)).toMatchObject({
      status: "warn",
      detail: "the gateway answers, on 127.0.0.1 only",
    });
    expect(await doctor(`${TOKEN}-other`)).toMatchObject({ status: "fail" });
  }, 120_000);

  it("prints nothing the backend sent: no owner email or phone, no document, no token", () => {
    const output = service.output();
    expect(output).toContain("gateway write");
    for (const secret of [EMAIL, PHONE, DOCUMENT_MARKER, TOKEN]) expect(output).not.toContain(secret);
  });
});
