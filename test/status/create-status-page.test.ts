import { connect } from "@loops-sync/db";
import { createStatusPage, type SyncStatus, serveStatusPage } from "@loops-sync/status";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

describe("createStatusPage", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  it("serves the page with a nonce CSP that allows nothing from elsewhere, mounted under any path", async () => {
    const served = await serveStatusPage({ sql: db.sql, refreshMs: 1500, basePath: "/ops/status" });
    onTestFinished(() => served.close());
    expect(served.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/ops\/status$/);
    const res = await fetch(served.url);
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy")!;
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeTruthy();
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'self'");
    const html = await res.text();
    expect(html).toContain(`<script nonce="${nonce}">`);
    expect(html).toContain('data-refresh-ms="1500"');
    expect(html).not.toMatch(/<(script|link)[^>]+(src|href)="(https?:)?\/\//);
    const again = await fetch(served.url);
    expect(again.headers.get("content-security-policy")).not.toBe(csp);
  });

  it("answers /api with the SyncStatus JSON", async () => {
    await db.sql`insert into sync.merchants (id) values ('mer_only')`;
    const served = await serveStatusPage({ sql: db.sql });
    onTestFinished(() => served.close());
    const res = await fetch(`${served.url}/api`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const body = (await res.json()) as SyncStatus;
    expect(body.merchants.map((m) => m.merchantId)).toEqual(["mer_only"]);
    expect(body.eventsPerMinute).toHaveLength(60);
  });

  it("answers 503 with a typed error, and no connection details, when Postgres cannot be reached", async () => {
    const unreachable = connect("postgres://loops:hunter2@127.0.0.1:1/nowhere", {
      max: 1,
      connectTimeoutSeconds: 1,
    });
    const errors: unknown[] = [];
    try {
      const app = createStatusPage({ sql: unreachable, onError: (e) => errors.push(e) });
      const res = await app.request("/api");
      expect(res.status).toBe(503);
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({
        error: { code: "status_unavailable", message: "cannot read the sync status from Postgres" },
      });
      expect(text).not.toContain("hunter2");
      expect(errors).toHaveLength(1);
    } finally {
      await unreachable.end({ timeout: 1 });
    }
  });

  it("rejects a refresh interval that would hammer the database", () => {
    expect(() => createStatusPage({ sql: db.sql, refreshMs: 10 })).toThrow(RangeError);
    let caught: unknown;
    try {
      createStatusPage({ sql: db.sql, refreshMs: 1.5 });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(RangeError);
    expect((caught as { code?: string }).code).toBe("invalid_option");
  });
});
