// `loops-sync demo --forward`: a new user sees the whole way, from the sandbox's webhooks to an endpoint of
// their own that prints each change it receives, signed.

import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../support/db.ts";
import { runCli } from "../support/operator-run.ts";

describe("loops-sync demo --forward", () => {
  it("prints every change the built-in endpoint received, and their count; a plain demo after shows it off", {
    timeout: 300_000,
  }, async () => {
    const db = await createTestDatabase();
    try {
      const demo = await runCli(
        ["demo", "--duration", "3", "--rate", "2", "--forward"],
        { DATABASE_URL: db.url },
        100_000,
      );
      expect(demo.code, demo.stderr).toBe(0);
      expect(demo.stdout).toMatch(/^forwarded chg_\d+: order ord_\S+ insert v1 placed \(webhook\)$/m);
      // The order the demo made with POST /sandbox/orders (a simulated channel's) reached the mirror.
      const made = /^created (ord_\S+) with POST \/sandbox\/orders$/m.exec(demo.stdout)?.[1];
      expect(made, demo.stdout).toBeDefined();
      expect(demo.stdout).toMatch(
        new RegExp(`^the sandbox order ${made} \\(POST /sandbox/orders\\) is mirrored, version \\d+$`, "m"),
      );
      const [row] = await db.sql<{ id: string }[]>`select id from replica.orders where id = ${made!}`;
      expect(row?.id).toBe(made);
      const summary =
        /^forwarded (\d+) changes to the built-in endpoint, signed \(Standard Webhooks\); 0 duplicate\(s\), 0 refused$/m.exec(
          demo.stdout,
        );
      expect(summary, demo.stdout).not.toBeNull();
      const [changes] = await db.sql<{ n: number }[]>`select count(*)::int as n from replica.changes`;
      expect(Number(summary![1])).toBe(changes!.n);
      expect(demo.stdout.match(/^forwarded chg_/gm)).toHaveLength(changes!.n);

      // Then a plain demo on the same data, as a new user tries next: nothing forwards any more, and status
      // says so (it said "ok" for the first run's endpoint while the changes piled up).
      const plain = await runCli(
        ["demo", "--duration", "3", "--rate", "2"],
        { DATABASE_URL: db.url },
        100_000,
      );
      expect(plain.code, plain.stderr).toBe(0);
      const status = await runCli(["status", "--json"], { DATABASE_URL: db.url }, 60_000);
      const { forwarding } = JSON.parse(status.stdout);
      expect(forwarding.state).toBe("off");
      expect(forwarding.undelivered).toBeGreaterThan(0);
      expect(status.code).toBe(1);
    } finally {
      await db.drop();
    }
  });
});
