// /healthz and /readyz of real processes whose Postgres goes away: not ready at once, not alive once the
// outage outlasts HEALTH_DATABASE_GRACE_SECONDS, both back when Postgres is; a worker stops on SIGTERM in
// such an outage; and a worker whose job runner stopped stays not alive until it is restarted.

import { randomBytes } from "node:crypto";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { adminUrlOf, receiverUrlOf } from "#testkit/processes";
import { waitFor } from "#testkit/wait-for";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.ts";
import { workerWorld } from "../support/worker-world.ts";

const RUN_ID = `health-${randomBytes(4).toString("hex")}`;

const codeOf = async (url: string) => {
  const response = await fetch(url);
  return response.ok ? "ok" : ((await response.json()) as { code: string }).code;
};

describe("health of a process that loses Postgres", () => {
  const w = workerWorld(RUN_ID, "health");
  let proxy: TcpProxy;
  const throughProxy = () => {
    const url = new URL(w.db.url);
    url.hostname = "127.0.0.1";
    url.port = String(proxy.port);
    return url.toString();
  };

  beforeAll(async () => {
    const target = new URL(w.db.url);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  });
  afterEach(async () => {
    await proxy?.restore();
  });
  afterAll(async () => {
    await proxy?.close();
  });

  it("turns not ready at once, not alive after the grace period, and recovers", {
    timeout: 90_000,
  }, async () => {
    const env = w.env({ DATABASE_URL: throughProxy(), HEALTH_DATABASE_GRACE_SECONDS: "6" });
    const worker = w.procs.spawn({ name: `${RUN_ID}-worker`, args: ["worker"], env });
    const receiver = w.procs.spawn({ name: `${RUN_ID}-receiver`, args: ["receiver"], env });
    const urls = {
      workerAdmin: await adminUrlOf(worker),
      receiverAdmin: await adminUrlOf(receiver),
      receiverPublic: await receiverUrlOf(receiver),
    };
    await worker.waitForLine(/"msg":"worker started"/);
    const all = async (path: string) =>
      Object.fromEntries(
        await Promise.all(Object.entries(urls).map(async ([k, base]) => [k, await codeOf(`${base}${path}`)])),
      );
    const every = (code: string) => Object.fromEntries(Object.keys(urls).map((k) => [k, code]));
    // Ready only once started (the catch-up at start scheduled), so the outage below hits a running process.
    await waitFor(async () => JSON.stringify(await all("/readyz")) === JSON.stringify(every("ok")), {
      what: "every /readyz to answer ok",
    });
    expect(await all("/healthz")).toEqual(every("ok"));

    await proxy.cut();
    // Within the grace period a short outage does not get the process restarted.
    expect(await all("/healthz")).toEqual(every("ok"));
    await waitFor(
      async () => JSON.stringify(await all("/readyz")) === JSON.stringify(every("database_unavailable")),
      {
        what: "every /readyz to answer database_unavailable",
      },
    );
    await waitFor(
      async () => JSON.stringify(await all("/healthz")) === JSON.stringify(every("database_lost")),
      {
        timeoutMs: 30_000,
        what: "every /healthz to answer database_lost",
      },
    );

    await proxy.restore();
    await waitFor(async () => JSON.stringify(await all("/healthz")) === JSON.stringify(every("ok")), {
      timeoutMs: 30_000,
      what: "every /healthz back to ok",
    });
    await waitFor(async () => JSON.stringify(await all("/readyz")) === JSON.stringify(every("ok")), {
      timeoutMs: 30_000,
      what: "every /readyz back to ok",
    });
    expect([worker.alive(), receiver.alive()]).toEqual([true, true]);
  });

  it("stops on SIGTERM in an outage longer than the grace, without waiting for Postgres", {
    timeout: 60_000,
  }, async () => {
    const env = w.env({ DATABASE_URL: throughProxy(), HEALTH_DATABASE_GRACE_SECONDS: "1" });
    const worker = w.procs.spawn({ name: `${RUN_ID}-outage-stop`, args: ["worker"], env });
    const admin = await adminUrlOf(worker);
    await waitFor(async () => (await codeOf(`${admin}/readyz`)) === "ok", { what: "/readyz to answer ok" });
    await proxy.cut();
    await waitFor(async () => (await codeOf(`${admin}/healthz`)) === "database_lost", {
      timeoutMs: 30_000,
      what: "/healthz to answer database_lost",
    });
    expect(worker.alive()).toBe(true);
    // Escalated to SIGKILL (and so failed below) if the stop still waited for Postgres after 20 s.
    await worker.kill("SIGTERM", 20_000);
    expect(await worker.exited).toEqual(expect.objectContaining({ code: 0, signal: null }));
  });

  it("a worker whose job runner stopped is neither alive nor ready, though Postgres answers", {
    timeout: 60_000,
  }, async () => {
    const worker = w.procs.spawn({ name: `${RUN_ID}-runner`, args: ["worker"], env: w.env() });
    const admin = await adminUrlOf(worker);
    await waitFor(async () => (await codeOf(`${admin}/readyz`)) === "ok", { what: "/readyz to answer ok" });
    expect(await codeOf(`${admin}/healthz`)).toBe("ok");
    // What a newer graphile-worker announces after a breaking migration of its schema: every older runner
    // stops taking jobs, while the process (its pools, its listeners) stays up.
    await w.db
      .sql`select pg_notify('worker:migrate', ${JSON.stringify({ migrationNumber: 999_999, breaking: true })})`;
    await worker.waitForLine(/"msg":"worker runner stopped; this process takes no more jobs"/);
    const health = await fetch(`${admin}/healthz`);
    expect(health.status).toBe(503);
    expect(((await health.json()) as { code: string; detail: string }).code).toBe("worker_stopped");
    expect(await codeOf(`${admin}/readyz`)).toBe("worker_stopped");
    expect(worker.alive()).toBe(true);
    // It still shuts down on SIGTERM by itself (no SIGKILL needed), its pools closed.
    await worker.kill("SIGTERM", 20_000);
    expect((await worker.exited).signal).toBeNull();
  });
});
