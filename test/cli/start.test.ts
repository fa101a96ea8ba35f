// `loops-sync start` as an operator runs it: a child process configured only through the public env names,
// against the sandbox over real HTTP and a real database.
import { once } from "node:events";
import {
  DEFAULT_SANDBOX_CREDENTIALS,
  DEFAULT_WEBHOOK_SECRET,
  type Sandbox,
  startSandbox,
} from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { type StartedLoopsSync, spawnStart, startLoopsSync } from "../support/loops-sync-start.ts";

describe("loops-sync start", () => {
  let db: TestDatabase;
  let sandbox: Sandbox;
  let started: StartedLoopsSync;

  beforeAll(async () => {
    db = await createTestDatabase();
    sandbox = await startSandbox({ port: 0 });
    started = await startLoopsSync({ databaseUrl: db.url, sandbox });
  });

  afterAll(async () => {
    if (started && started.child.exitCode === null) started.child.kill("SIGKILL");
    await sandbox?.close();
    await db?.drop();
  });
  it("mirrors orders, serves metrics of both parts and the operator page, and stops cleanly on SIGTERM", async () => {
    const order = sandbox.createOrder({ merchantId: "mer_demo_2" });
    const advanced = sandbox.advanceOrder(order.id);
    await waitFor(
      async () => {
        const [row] = await db.sql`select version from replica.orders where id = ${order.id}`;
        return row && Number(row.version) === advanced.version;
      },
      { what: "the order's newest version in replica.orders" },
    );

    const metrics = await (await fetch(`${started.admin}/metrics`)).text();
    expect(metrics).toContain("loops_sync_webhooks_received_total");
    expect(metrics).toContain("loops_sync_worker_jobs_total");

    expect((await fetch(`${started.base}/status/api`)).status).toBe(404);
    const status = await fetch(`${started.admin}/status/api`);
    expect(status.status).toBe(200);
    const body = JSON.stringify(await status.json());
    expect(body).toContain("mer_demo_2");
    expect(body).not.toContain(DEFAULT_SANDBOX_CREDENTIALS.clientSecret);

    started.child.kill("SIGTERM");
    const [code, signal] = await once(started.child, "exit");
    const output = started.output();
    expect({ code, signal, tail: code === 0 ? "" : output.slice(-2000) }).toEqual({
      code: 0,
      signal: null,
      tail: "",
    });
    expect(output).not.toContain(DEFAULT_SANDBOX_CREDENTIALS.clientSecret);
    expect(output).not.toContain(DEFAULT_WEBHOOK_SECRET);
  });

  it("ends cleanly on a SIGTERM that arrives while it is still starting", async () => {
    // The admin listener opens first; the receiver and the worker start after it. A signal at that moment
    // (an orchestrator scaling down) must not be Node's default death by SIGTERM.
    const child = spawnStart({ databaseUrl: db.url, sandbox });
    let output = "";
    child.stderr!.on("data", (d) => {
      output += d;
      if (output.includes('"msg":"admin listening"') && !child.killed) child.kill("SIGTERM");
    });
    const [code, signal] = await once(child, "exit");
    expect(output).toContain('"msg":"admin listening"');
    expect({ code, signal, tail: code === 0 ? "" : output.slice(-2000) }).toEqual({
      code: 0,
      signal: null,
      tail: "",
    });
  });
});
