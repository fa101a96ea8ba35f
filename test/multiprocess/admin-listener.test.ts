// The admin listener of real `loops-sync receiver` and `loops-sync worker` processes: /metrics, /status and
// /status/api live there and nowhere on the webhook port; ADMIN_TOKEN guards them but not /healthz, /readyz.

import { randomBytes } from "node:crypto";
import { version } from "@loops-sync/config";
import { describe, expect, it } from "vitest";
import { freePort } from "#testkit/free-port";
import { adminUrlOf, receiverUrlOf, recordSecrets } from "#testkit/processes";
import { workerWorld } from "../support/worker-world.ts";

const RUN_ID = `admin-${randomBytes(4).toString("hex")}`;
const TOKEN = randomBytes(24).toString("hex");
const ADMIN_PATHS = ["/metrics", "/status", "/status/api"];

const basic = (password: string) => `Basic ${Buffer.from(`operator:${password}`).toString("base64")}`;

describe("the admin listener of each process", () => {
  const w = workerWorld(RUN_ID, "admin");
  // The secrets suite then checks that no log line of these processes shows the token.
  recordSecrets(`${RUN_ID}-admin-token`, [TOKEN]);

  it("receiver: the public port answers no admin path; ADMIN_PORT (or METRICS_PORT) serves them all", {
    timeout: 60_000,
  }, async () => {
    const adminPort = await freePort();
    const receiver = w.procs.spawn({
      name: `${RUN_ID}-receiver`,
      args: ["receiver"],
      // METRICS_PORT alone still sets the admin port (the alias kept for one release).
      env: w.env({ ADMIN_PORT: "", METRICS_PORT: String(adminPort), STATUS_PAGE: "true" }),
    });
    const publicUrl = await receiverUrlOf(receiver);
    const admin = await adminUrlOf(receiver);
    expect(admin).toBe(`http://127.0.0.1:${adminPort}`);

    for (const path of ADMIN_PATHS) {
      const response = await fetch(`${publicUrl}${path}`);
      expect([path, response.status]).toEqual([path, 404]);
    }
    for (const path of ["/healthz", "/readyz"]) {
      expect([path, (await fetch(`${publicUrl}${path}`)).status]).toEqual([path, 200]);
      expect([path, (await fetch(`${admin}${path}`)).status]).toEqual([path, 200]);
    }

    const metrics = await (await fetch(`${admin}/metrics`)).text();
    expect(metrics).toMatch(/^process_resident_memory_bytes \d+/m);
    expect(metrics).toContain(`loops_sync_build_info{version="${version}"} 1`);
    expect(metrics).toContain("# TYPE loops_sync_webhooks_received_total counter");
    expect(metrics).toMatch(/^loops_sync_events_pending \d+/m);
    const page = await fetch(`${admin}/status`);
    expect([page.status, page.headers.get("content-type")]).toEqual([200, "text/html; charset=UTF-8"]);
    const api = await fetch(`${admin}/status/api`);
    expect(api.status).toBe(200);
    expect(await api.json()).toHaveProperty("merchants");
  });

  it("worker with ADMIN_TOKEN: 401 without the token or with a wrong one, 200 with it; health stays open", {
    timeout: 60_000,
  }, async () => {
    const worker = w.procs.spawn({
      name: `${RUN_ID}-worker`,
      args: ["worker"],
      env: w.env({ ADMIN_TOKEN: TOKEN, STATUS_PAGE: "true" }),
    });
    const admin = await adminUrlOf(worker);
    await worker.waitForLine(/"msg":"worker started"/);

    for (const path of ADMIN_PATHS) {
      for (const authorization of [
        undefined,
        `Bearer ${TOKEN}x`,
        `Bearer ${TOKEN.slice(1)}`,
        basic("nope"),
      ]) {
        const response = await fetch(`${admin}${path}`, authorization ? { headers: { authorization } } : {});
        expect([path, authorization, response.status]).toEqual([path, authorization, 401]);
        const body = await response.text();
        expect(body).toContain("admin_token_required");
        expect(body).not.toContain(TOKEN);
      }
      const bearer = await fetch(`${admin}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect([path, bearer.status]).toEqual([path, 200]);
      // What a browser sends after its login prompt: any user name, the token as the password.
      const browser = await fetch(`${admin}${path}`, { headers: { authorization: basic(TOKEN) } });
      expect([path, browser.status]).toEqual([path, 200]);
    }
    const challenge = await fetch(`${admin}/status`);
    expect(challenge.headers.get("www-authenticate")).toMatch(/^Basic realm="loops-sync admin"/);
    for (const path of ["/healthz", "/readyz"]) {
      expect([path, (await fetch(`${admin}${path}`)).status]).toEqual([path, 200]);
    }

    const metrics = await (
      await fetch(`${admin}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).text();
    expect(metrics).toMatch(/^process_resident_memory_bytes \d+/m);
    expect(metrics).toContain(`loops_sync_build_info{version="${version}"} 1`);
    expect(metrics).toContain("# TYPE loops_sync_worker_jobs_total counter");
    expect(metrics).not.toContain(TOKEN);
    expect(worker.alive()).toBe(true);
  });
});
