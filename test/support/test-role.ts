import { randomBytes } from "node:crypto";
import { connect, type Sql } from "@loops-sync/db";
import { inject } from "vitest";

export interface TestRole {
  /** Unique on the server: roles are cluster-wide and other files and checkouts run at the same time. */
  name: string;
  /** `url` with this role as its user (the test server trusts local connections). */
  urlFor(url: string): string;
  /** A one-connection pool as this role on `url`; end it before drop(). */
  connect(url: string): Sql;
  /** Drops the role; drop the databases it has rights in first (a role with rights cannot be dropped). */
  drop(): Promise<void>;
}

/** A fresh LOGIN role with no other attributes (or `attributes`, e.g. "createdb"), named `prefix_<random>`. */
export async function createTestRole(prefix: string, attributes = ""): Promise<TestRole> {
  const name = `${prefix}_${randomBytes(5).toString("hex")}`;
  const admin = connect(inject("databaseUrl"), { max: 1 });
  try {
    await admin.unsafe(`create role ${name} login nosuperuser nocreatedb nocreaterole ${attributes}`);
  } finally {
    await admin.end();
  }
  const urlFor = (url: string) => {
    const u = new URL(url);
    u.username = name;
    u.password = "";
    return u.toString();
  };
  return {
    name,
    urlFor,
    connect: (url) => connect(urlFor(url), { max: 1, applicationName: `loops-sync-test ${prefix}` }),
    async drop() {
      const cleanup = connect(inject("databaseUrl"), { max: 1 });
      try {
        await cleanup.unsafe(`drop role if exists ${name}`);
      } finally {
        await cleanup.end();
      }
    },
  };
}

/** The SQLSTATE a statement failed with, or "ok" when it ran: `expect(await outcome(sql`…`)).toBe("42501")`. */
export async function outcome(query: PromiseLike<unknown>): Promise<string> {
  try {
    await query;
    return "ok";
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}
