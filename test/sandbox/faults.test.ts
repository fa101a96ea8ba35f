import { DEFAULT_WEBHOOK_SECRET, type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { afterEach, describe, expect, it } from "vitest";
import { apiAs, getToken, startReceiver, type TestReceiver } from "../support/sandbox-api.ts";

describe("faults, seeded and honoured at their rates", () => {
  let sandbox: Sandbox | undefined;
  let receiver: TestReceiver | undefined;
  afterEach(async () => {
    await sandbox?.close();
    await receiver?.close();
  });

  async function runWebhooks(faults: Parameters<Sandbox["setFaults"]>[0], events: number) {
    sandbox = await startSandbox();
    receiver = await startReceiver();
    sandbox.setFaults(faults);
    sandbox.addWebhookEndpoint({ url: receiver.url, secrets: [DEFAULT_WEBHOOK_SECRET] });
    const emitted: string[] = [];
    for (let i = 0; i < events; i++) emitted.push(sandbox.createOrder({ merchantId: "mer_demo_1" }).id);
    await sandbox.flushDeliveries();
    const ids = receiver.received.map((r) => String(r.headers["webhook-id"]));
    const eventIds = sandbox.truth.events().map((e) => e.id);
    const result = { ids, eventIds, stats: sandbox.stats(), received: [...receiver.received] };
    await sandbox.close();
    await receiver.close();
    sandbox = undefined;
    receiver = undefined;
    return result;
  }

  it("drops and duplicates webhooks at the set rates, the same ones for the same seed", async () => {
    const n = 600;
    const a = await runWebhooks({ seed: 7, webhookDropRate: 0.2, webhookDuplicateRate: 0.1 }, n);
    const distinct = new Set(a.ids);
    const dropped = n - distinct.size;
    const duplicated = a.ids.length - distinct.size;
    expect(dropped / n).toBeGreaterThan(0.2 - 0.06);
    expect(dropped / n).toBeLessThan(0.2 + 0.06);
    // Duplicates are rolled for every delivery; only the ones not dropped reach the receiver.
    expect(duplicated / distinct.size).toBeGreaterThan(0.1 - 0.05);
    expect(duplicated / distinct.size).toBeLessThan(0.1 + 0.05);
    expect(a.stats.webhooksDropped).toBe(dropped);
    // Which events were dropped depends only on the seed.
    const b = await runWebhooks({ seed: 7, webhookDropRate: 0.2, webhookDuplicateRate: 0.1 }, n);
    const droppedIndexes = (r: typeof a) =>
      r.eventIds.map((id, i) => (r.ids.includes(id) ? -1 : i)).filter((i) => i >= 0);
    expect(droppedIndexes(b)).toEqual(droppedIndexes(a));
    const c = await runWebhooks({ seed: 8, webhookDropRate: 0.2 }, n);
    expect(droppedIndexes(c)).not.toEqual(droppedIndexes(a));
  });

  it("delays every webhook, and reorders them within a window", async () => {
    const started = Date.now();
    const delayed = await runWebhooks({ webhookDelayMs: 150 }, 5);
    expect(delayed.received).toHaveLength(5);
    for (const r of delayed.received) expect(r.at - started).toBeGreaterThanOrEqual(140);
    const reordered = await runWebhooks({ seed: 3, webhookReorderWindowMs: 80 }, 40);
    expect(reordered.ids).toHaveLength(40);
    expect(new Set(reordered.ids)).toEqual(new Set(reordered.eventIds));
    expect(reordered.ids).not.toEqual(reordered.eventIds);
  });

  it("answers API calls with 429 + Retry-After, 503, slow answers and resets at their rates", async () => {
    sandbox = await startSandbox();
    const token = await getToken(sandbox);
    const api = apiAs(sandbox, token);
    sandbox.setFaults({
      seed: 11,
      api429Rate: 0.15,
      api429RetryAfterSeconds: 7,
      api5xxRate: 0.1,
      apiResetRate: 0.05,
      apiSlowRate: 0.05,
      apiSlowMs: 30,
    });
    const n = 500;
    const outcomes = { ok: 0, rateLimited: 0, unavailable: 0, reset: 0, slow: 0 };
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      try {
        const r = await api("/orders?limit=1");
        if (r.status === 429) {
          outcomes.rateLimited++;
          expect(r.headers.get("retry-after")).toBe("7");
          expect(r.body.code).toBe("rate_limited");
        } else if (r.status === 503) {
          outcomes.unavailable++;
          expect(r.headers.get("content-type")).toBe("application/problem+json");
        } else {
          expect(r.status).toBe(200);
          outcomes.ok++;
          if (performance.now() - t0 >= 30) outcomes.slow++;
        }
      } catch {
        outcomes.reset++;
      }
    }
    const near = (count: number, rate: number, tolerance = 0.05) => {
      expect(count / n).toBeGreaterThan(rate - tolerance);
      expect(count / n).toBeLessThan(rate + tolerance);
    };
    near(outcomes.rateLimited, 0.15);
    near(outcomes.unavailable, 0.1);
    near(outcomes.reset, 0.05, 0.03);
    const stats = sandbox.stats();
    expect(stats.apiFaults.slow).toBeGreaterThan(0);
    // Every call the dice made slow did answer late (a lower bound, not a performance assertion).
    expect(outcomes.slow).toBeGreaterThanOrEqual(stats.apiFaults.slow);
    expect(stats.apiCalls["GET /orders"]).toBe(n);
    expect(stats.apiFaults.reset).toBe(outcomes.reset);
  });

  it("ends a slow answer's wait when the client hangs up", async () => {
    sandbox = await startSandbox();
    const token = await getToken(sandbox);
    sandbox.setFaults({ apiSlowRate: 1, apiSlowMs: 60_000 });
    const waiting = () => sandbox!.stats().slowAnswersWaiting;
    const hangUp = new AbortController();
    const call = fetch(`${sandbox.apiUrl}/orders`, {
      headers: { authorization: `Bearer ${token}`, "service-merchant-id": "mer_demo_1" },
      signal: hangUp.signal,
    }).catch((error: unknown) => error);
    await expect.poll(() => sandbox!.stats().apiFaults.slow).toBe(1);
    // The slow answer waits a minute…
    expect(waiting()).toBe(1);
    hangUp.abort();
    expect(await call).toBeInstanceOf(Error);
    // …unless the client hangs up: nothing waits a minute to answer a socket that is gone.
    await expect.poll(waiting).toBe(0);
  });

  it("refuses a request body over the API's largest (5 MB) and still reads GETs without one", async () => {
    sandbox = await startSandbox();
    const api = apiAs(sandbox, await getToken(sandbox));
    const tooLarge = await api("/sandbox/orders", {
      method: "POST",
      body: { location_id: "loc_x", notes: "x".repeat(5 * 1024 * 1024 + 64 * 1024) },
    });
    expect(tooLarge.status).toBe(400);
    expect(tooLarge.body).toMatchObject({ code: "invalid_request" });
    expect(JSON.stringify(tooLarge.body)).toContain("larger than 5 MB");
    expect((await api("/orders?limit=1")).status).toBe(200);
  });

  it("expires tokens early while the token endpoint still announces 900 s", async () => {
    sandbox = await startSandbox();
    sandbox.setFaults({ tokenTtlSeconds: 60 });
    const response = await fetch(sandbox.authUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials&client_id=sandbox-client&client_secret=sandbox-secret",
    });
    const token = (await response.json()) as { access_token: string; expires_in: number };
    expect(token.expires_in).toBe(900);
    const api = apiAs(sandbox, token.access_token);
    expect((await api("/orders")).status).toBe(200);
    sandbox.clock.advance(61_000);
    const refused = await api("/orders");
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe("unauthorized");
    sandbox.setFaults({ tokenTtlSeconds: null });
    expect((await api("/orders")).status).toBe(200);
    sandbox.clock.advance(900_000);
    expect((await api("/orders")).status).toBe(401);
  });

  it("shifts the Date header of every answer by clockSkewSeconds: token, API and error answers alike", async () => {
    sandbox = await startSandbox();
    const skewOf = (r: Response) => (Date.parse(r.headers.get("date") ?? "") - Date.now()) / 1000;
    const token = await getToken(sandbox);
    const api = () =>
      fetch(`${sandbox!.apiUrl}/connection`, {
        headers: { authorization: `Bearer ${token}`, "service-merchant-id": "mer_demo_1" },
      });
    expect(Math.abs(skewOf(await api()))).toBeLessThan(5);
    const r = await fetch(`${sandbox.url}/admin/faults`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ clockSkewSeconds: -3600 }),
    });
    expect(((await r.json()) as { clockSkewSeconds: number }).clockSkewSeconds).toBe(-3600);
    const answers = [
      await api(),
      await fetch(`${sandbox.apiUrl}/connection`),
      await fetch(sandbox.authUrl, {
        method: "POST",
        body: new URLSearchParams({ grant_type: "client_credentials" }),
      }),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 401, 400]);
    for (const a of answers) {
      expect(skewOf(a)).toBeGreaterThan(-3605);
      expect(skewOf(a)).toBeLessThan(-3595);
    }
    expect(() => sandbox!.setFaults({ clockSkewSeconds: 1.5 })).toThrow(/clockSkewSeconds/);
  });

  it("rejects fault values outside their range", async () => {
    sandbox = await startSandbox();
    expect(() => sandbox!.setFaults({ webhookDropRate: 1.5 })).toThrow(/webhookDropRate/);
    const r = await fetch(`${sandbox.url}/admin/faults`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ api5xxRate: -1 }),
    });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { code: string }).code).toBe("invalid_request");
    expect(sandbox.getFaults().api5xxRate).toBe(0);
  });
});
