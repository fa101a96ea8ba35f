// `loops-sync refresh` against the sandbox, all real: a child process per run beside `loops-sync start`, the
// mirror read from Postgres. What changed without an event, and our own writes, arrive only this way.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { type MirrorWorld, startMirrorWorld } from "../support/mirror-world.ts";
import { runCli } from "../support/operator-run.ts";

const BRAND = "brd_demo_1";

describe("loops-sync refresh", () => {
  let w: MirrorWorld;
  beforeAll(async () => {
    w = await startMirrorWorld();
    await waitFor(async () => (await w.menuVersion("brd_demo_2")) === 1, { what: "the reconcile at start" });
  });
  afterAll(async () => {
    await w?.close();
  });
  const refresh = (...args: string[]) => w.refresh(...args);
  const admin = (path: string, method: string, body: unknown) => w.admin(path, method, body);

  it("renames a brand renamed without any event on refresh, and a second refresh changes nothing", async () => {
    const renamed = await admin(`/brands/${BRAND}`, "PATCH", {
      name: { en: "Najd Grill House", ar: "بيت مشويات نجد" },
    });
    expect(renamed.status).toBe(200);
    const first = await refresh("--json");
    expect(first.code, first.stderr).toBe(0);
    const [brand] = await w.db.sql`select name_en, name_ar from replica.brands where id = ${BRAND}`;
    expect(brand).toEqual({ name_en: "Najd Grill House", name_ar: "بيت مشويات نجد" });

    const second = await refresh("--json");
    expect(second.code, second.stderr).toBe(0);
    const again = JSON.parse(second.stdout) as {
      merchants: { changed: Record<string, number>; apiCalls: number }[];
      apiCalls: number;
    };
    // As docs/runbook.md ("The reconcile") counts: 2 + 1 + 2 (locations) + 1 + 1 (brands) per merchant, + GET /channels.
    expect(again.merchants.map((m) => m.apiCalls)).toEqual([7, 7]);
    expect(again.apiCalls).toBe(15);
    const nothing = {
      merchant: 0,
      connection: 0,
      location: 0,
      channel_connection: 0,
      brand: 0,
      menu: 0,
      job: 0,
    };
    expect(again.merchants.map((m) => m.changed)).toEqual([nothing, nothing]);
    // The first refresh recorded the rename in the change feed, the second nothing.
    const feed = await w.db.sql`
      select resource, operation, source from replica.changes where resource = 'brand' and resource_id = ${BRAND}
      order by position desc limit 1`;
    expect(feed).toEqual([{ resource: "brand", operation: "update", source: "reconcile" }]);
  });

  it("mirrors our own publish on refresh, with each location's result: which one rejected the menu, and why", async () => {
    const job = await w.client.forMerchant("mer_demo_2").menus.publish("brd_demo_2");
    await waitFor(
      async () =>
        (
          await w.db.sql`
            select 1 from sync.events
            where type = 'job.completed' and payload #>> '{data,job_id}' = ${job.id} and outcome = 'ignored_self'`
        ).length === 1,
      { what: "our publish's job.completed stored as ignored_self" },
    );
    const run = await refresh("--merchant", "mer_demo_2", "--json");
    expect(run.code, run.stderr).toBe(0);
    const rejected = await w.db.sql`
      select location_id, channel, error_code from reporting.menu_publish_results
      where job_id = ${job.id} and status = 'failed' order by location_id`;
    // Careem takes no menus through the API (the sandbox's catalog says so).
    expect(rejected).toEqual([
      { location_id: "loc_demo_2a", channel: "careem", error_code: "menu_not_supported" },
      { location_id: "loc_demo_2b", channel: "careem", error_code: "menu_not_supported" },
    ]);
    const [stored] = await w.db.sql`select status from replica.jobs where id = ${job.id}`;
    expect(stored).toEqual({ status: "partially_failed" });
  });

  it("has refresh answer --help and a bad flag as the README says", async () => {
    const help = await runCli(["refresh", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--merchant <id>/);
    expect(help.stdout).toMatch(/Exit codes:/);
    const bad = await runCli(["refresh", "--merchant", "shop-1"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--merchant.*mer_abc123/);
  });
});
