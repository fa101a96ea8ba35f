import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, inject, it } from "vitest";
import { createTestDatabase } from "../support/db.ts";

const bin = path.resolve(import.meta.dirname, "../../bin/loops-sync");

function run(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(bin, args, {
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", LOG_LEVEL: "silent", ...env },
    timeout: 20_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

function databaseUrl(name: string): string {
  const u = new URL(inject("databaseUrl"));
  u.pathname = `/${name}`;
  return u.toString();
}

describe("loops-sync errors", () => {
  it("a bad environment value: one line naming the variable, exit 2, no stack trace", () => {
    const r = run(["migrate"], { PORT: "eighty", DATABASE_URL: databaseUrl("postgres") });
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe('loops-sync: PORT: got "eighty", expected a whole number');
  });

  it("an OTEL_* value the exporters cannot use: one line naming it, exit 2, before anything starts", () => {
    const r = run(["receiver"], {
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
      DATABASE_URL: databaseUrl("postgres"),
    });
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(
      'loops-sync: OTEL_EXPORTER_OTLP_PROTOCOL: got "grpc", expected http/protobuf or http/json (grpc is not supported)',
    );
  });

  it("a bad secret value is named but never echoed", () => {
    const r = run(["migrate"], {
      LOOPS_WEBHOOK_SECRETS: "hunter2-topsecret",
      DATABASE_URL: databaseUrl("postgres"),
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^loops-sync: LOOPS_WEBHOOK_SECRETS: got a value of 17 characters \(hidden\)/);
    expect(r.stderr).not.toContain("hunter2");
  });

  it("an unreachable database: one line, exit 3", () => {
    const r = run(["migrate"], { DATABASE_URL: "postgres://postgres@127.0.0.1:1/nowhere" });
    expect(r.code).toBe(3);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(
      /^loops-sync: cannot reach Postgres at 127\.0\.0\.1:1\/nowhere .*check DATABASE_URL/,
    );
  });

  it("a database with no connection free: one line naming the limits to change, exit 3", async () => {
    const db = await createTestDatabase();
    const role = `ls_full_${process.pid}`;
    try {
      // A role allowed no connection: Postgres answers 53300, as when max_connections is reached.
      await db.sql.unsafe(`create role ${role} login connection limit 0`);
      const url = new URL(db.url);
      url.username = role;
      const r = run(["status"], { DATABASE_URL: url.toString() });
      expect(r.code).toBe(3);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toMatch(
        /^loops-sync: Postgres at 127\.0\.0\.1:\d+\/\w+ has no connection free \(53300: too many connections for role "ls_full_\d+"\); lower DATABASE_POOL_SIZE/,
      );
    } finally {
      await db.sql.unsafe(`drop role if exists ${role}`);
      await db.drop();
    }
  });

  it("a migration changed after it was applied: one line naming it, exit 3", async () => {
    const db = await createTestDatabase();
    try {
      // Same state as an edited file: the recorded checksum no longer matches the file on disk.
      await db.sql`update sync.migrations set checksum = 'deadbeef' where name = '0001_sync.sql'`;
      const r = run(["migrate"], { DATABASE_URL: db.url });
      expect(r.code).toBe(3);
      expect(r.stderr.trim()).toMatch(
        /^loops-sync: migration 0001_sync\.sql was edited after it was applied \(checksum deadbeef in the database, [0-9a-f]{12} on disk\); restore the file and put the change in a new migration$/,
      );
    } finally {
      await db.drop();
    }
  });

  it("an unknown command or flag: names it, suggests the fix, exit 2", () => {
    const r = run(["migrat"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown command 'migrat'");
    expect(r.stderr).toContain("Did you mean migrate?");
    const f = run(["migrate", "--frobnicate"]);
    expect(f.code).toBe(2);
    expect(f.stderr).toContain("unknown option '--frobnicate'");
  });

  it("--help lists the commands and the exit codes, exit 0", () => {
    const r = run(["--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("migrate");
    expect(r.stdout).toMatch(/Exit codes:[\s\S]*3 +Postgres unreachable/);
  });
});
