// The pause state machine on a real Postgres: entering keeps an existing pause, one process at a time
// probes a due scope (the application's first), a refused probe doubles the wait up to the maximum, an
// accepted one resumes, and sync.paused_until answers for the merchants it covers.

import {
  claimDueProbe,
  classifyUpstreamFailure,
  enterPause,
  listPauses,
  probeAccepted,
  probeRefused,
  type UpstreamFailure,
} from "@loops-sync/replica";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

type Paused = Extract<UpstreamFailure, { kind: "paused" }>;
const refusal = (code: string): Paused =>
  classifyUpstreamFailure({ status: code === "unauthorized" ? 401 : 403, code, message: code }) as Paused;
const backoff = { firstSeconds: 30, maxSeconds: 100 };

describe("upstream pauses", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  beforeEach(async () => {
    await db.sql`delete from sync.upstream_pauses`;
  });
  afterAll(async () => {
    await db?.drop();
  });
  const waitSeconds = async (scope: string) =>
    (
      await db.sql<{ s: number }[]>`
        select round(extract(epoch from probe_at - now()))::int as s from sync.upstream_pauses where scope = ${scope}`
    )[0]?.s;
  const makeDue = () => db.sql`update sync.upstream_pauses set probe_at = now() - interval '1 second'`;
  const pausedUntil = async (merchant: string) =>
    (await db.sql<{ at: Date | null }[]>`select sync.paused_until(${merchant}) as at`)[0]!.at;

  it("pauses the application for every merchant and a merchant's grant for that merchant only", async () => {
    await enterPause(db.sql, refusal("scope_not_granted"), "mer_a", backoff);
    expect(await pausedUntil("mer_a")).not.toBeNull();
    expect(await pausedUntil("mer_b")).toBeNull();
    await enterPause(db.sql, refusal("application_suspended"), "mer_b", backoff);
    expect(await pausedUntil("mer_b")).not.toBeNull();
    expect((await listPauses(db.sql)).map((p) => [p.scope, p.cause])).toEqual([
      ["application", "application_suspended"],
      ["merchant:mer_a", "scope_not_granted"],
    ]);
  });

  it("keeps an existing pause and its backoff when entered again", async () => {
    await enterPause(db.sql, refusal("insufficient_scope"), "mer_a", backoff);
    await makeDue();
    const claimed = await claimDueProbe(db.sql);
    await probeRefused(db.sql, claimed!.scope, backoff);
    const before = await waitSeconds("application");
    await enterPause(db.sql, refusal("unauthorized"), "mer_b", backoff);
    expect(await waitSeconds("application")).toBe(before);
    expect((await listPauses(db.sql))[0]).toMatchObject({ cause: "insufficient_scope", merchantId: "mer_a" });
  });

  it("gives a due probe to one process at a time, the application's first", async () => {
    await enterPause(db.sql, refusal("scope_not_granted"), "mer_a", backoff);
    await enterPause(db.sql, refusal("application_suspended"), "mer_b", backoff);
    expect(await claimDueProbe(db.sql)).toBeUndefined();
    await makeDue();
    const [first, second] = await Promise.all([claimDueProbe(db.sql), claimDueProbe(db.sql)]);
    expect([first?.scope, second?.scope].filter(Boolean)).toEqual(["application"]);
    // The merchant's probe waits while the application itself is refused.
    expect(await claimDueProbe(db.sql)).toBeUndefined();
    await probeAccepted(db.sql, "application");
    expect((await claimDueProbe(db.sql))?.scope).toBe("merchant:mer_a");
  });

  it("doubles the wait after each refused probe up to the maximum, and resumes on an answer", async () => {
    await enterPause(db.sql, refusal("application_suspended"), "mer_a", backoff);
    expect(await waitSeconds("application")).toBe(30);
    const waits: (number | undefined)[] = [];
    for (let i = 0; i < 3; i++) {
      await makeDue();
      await probeRefused(db.sql, (await claimDueProbe(db.sql))!.scope, backoff);
      waits.push(await waitSeconds("application"));
    }
    expect(waits).toEqual([60, 100, 100]);
    expect((await listPauses(db.sql))[0]?.probes).toBe(3);
    await probeAccepted(db.sql, "application");
    expect(await listPauses(db.sql)).toEqual([]);
    expect(await pausedUntil("mer_a")).toBeNull();
  });
});
