// A `loops-sync worker` that cannot finish starting (here: its admin port is taken by another worker, as
// happens with two workers on one host and the default ADMIN_PORT) must exit with an error, not stay
// alive with its database pool closed, holding a slot in the queue and failing every job it takes.

import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { freePort } from "#testkit/free-port";
import { workerWorld } from "../support/worker-world.ts";

const RUN_ID = `startup-${randomBytes(4).toString("hex")}`;

describe("a worker that fails to start", () => {
  const w = workerWorld(RUN_ID, "startup");
  const procs = w.procs;

  it("exits non-zero, naming the cause, when its admin port is taken", { timeout: 60_000 }, async () => {
    const port = String(await freePort());
    const env = w.env({ ADMIN_PORT: port });
    const first = procs.spawn({ name: `${RUN_ID}-worker-1`, args: ["worker"], env });
    await first.waitForLine(/"msg":"admin listening"/);
    const second = procs.spawn({ name: `${RUN_ID}-worker-2`, args: ["worker"], env });
    await second.waitForLine(
      /loops-sync: ADMIN_PORT: port \d+ is already in use; set ADMIN_PORT to a free port/,
    );
    const exit = await Promise.race([
      second.exited,
      new Promise<"still running">((resolve) => setTimeout(() => resolve("still running"), 10_000)),
    ]);
    expect(exit, "the second worker 10 s after its startup failed").not.toBe("still running");
    expect((exit as { code: number | null }).code).not.toBe(0);
    expect(first.alive()).toBe(true);
  });

  it("refuses a pool of one connection, naming DATABASE_POOL_SIZE; a receiver still takes it", {
    timeout: 60_000,
  }, async () => {
    const env = w.env({ DATABASE_POOL_SIZE: "1", ADMIN_PORT: "0" });
    const worker = procs.spawn({ name: `${RUN_ID}-pool-of-one`, args: ["worker"], env });
    await worker.waitForLine(/loops-sync: DATABASE_POOL_SIZE: got "1", expected at least 2 for a worker/);
    expect((await worker.exited).code).toBe(2);
    const receiver = procs.spawn({ name: `${RUN_ID}-receiver-of-one`, args: ["receiver"], env });
    await receiver.waitForLine(/"msg":"receiver listening"/);
    expect(receiver.alive()).toBe(true);
    await receiver.kill("SIGTERM");
  });
});
