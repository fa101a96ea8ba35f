// Property-based fuzzing of a running receiver (a `loops-sync receiver` child process) with thousands of
// random, mutated and oddly-shaped but correctly signed requests: never a 5xx except 503 while its
// database refuses connections, never a stored event that was not correctly signed, every acknowledged
// signed event stored, and the process still alive at the end. LOOPS_SYNC_FUZZ_SEED=<n> replays a run.

import { randomBytes } from "node:crypto";
import { connect } from "@loops-sync/db";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  type LoopsSyncProcess,
  loopsSyncEnv,
  ProcessGroup,
  receiverUrlOf,
  recordSecrets,
} from "#testkit/processes";
import { waitFor } from "#testkit/wait-for";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import {
  type HostileRequest,
  mutatedRequest,
  randomRequest,
  signedRequest,
} from "../support/webhook-arbitraries.ts";
import { concurrentBurst, plausibleSignedRequest } from "../support/webhook-bursts.ts";

const SEED = Number(process.env.LOOPS_SYNC_FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const SCALE = process.env.LOOPS_SYNC_SOAK === "1" ? 20 : 1;
const RUN_ID = `fuzz-${randomBytes(4).toString("hex")}`;
const SECRET = `whsec_${randomBytes(32).toString("base64")}`;
const WRONG_SECRET = `whsec_${randomBytes(32).toString("base64")}`;

describe(`receiver under hostile requests (seed ${SEED})`, () => {
  const procs = new ProcessGroup();
  let db: TestDatabase;
  let receiver: LoopsSyncProcess;
  let url: string;
  const signedIds = new Set<string>();
  const acknowledged = new Set<string>();
  const statuses = new Map<number, number>();

  async function send(r: HostileRequest, { databaseDown = false } = {}): Promise<number> {
    const response = await fetch(`${url}/webhooks/loops`, {
      method: "POST",
      headers: r.headers,
      body: r.body,
    });
    await response.arrayBuffer();
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    if (r.correctlySigned && r.id) {
      signedIds.add(r.id);
      if (response.status >= 200 && response.status < 300) acknowledged.add(r.id);
    }
    const allowed = databaseDown ? response.status < 500 || response.status === 503 : response.status < 500;
    if (!allowed)
      throw new Error(`${r.kind} request answered ${response.status} (database down: ${databaseDown})`);
    return response.status;
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    recordSecrets(RUN_ID, [SECRET, WRONG_SECRET]);
    receiver = procs.spawn({
      name: `${RUN_ID}-receiver`,
      args: ["receiver"],
      env: loopsSyncEnv({
        databaseUrl: db.url,
        api: { apiUrl: "http://127.0.0.1:9/v1", authUrl: "http://127.0.0.1:9/oauth/token" },
        credentials: {
          clientId: "fuzz",
          clientSecret: `fuzz-secret-${randomBytes(8).toString("hex")}`,
          applicationId: "app_fuzz",
        },
        webhookSecrets: [SECRET],
        extra: { DATABASE_POOL_SIZE: "3" },
      }),
    });
    url = await receiverUrlOf(receiver);
  }, 60_000);

  afterAll(async () => {
    await procs.killAll();
    await db?.drop();
  }, 30_000);

  it("answers thousands of random, mutated and odd signed requests without a 5xx", {
    timeout: 120_000 * SCALE,
  }, async () => {
    try {
      const params = { seed: SEED, endOnFailure: true };
      await fc.assert(
        fc.asyncProperty(randomRequest(), async (r) => void (await send(r))),
        { ...params, numRuns: 1000 * SCALE },
      );
      await fc.assert(
        fc.asyncProperty(mutatedRequest(SECRET, WRONG_SECRET), async (r) => {
          const status = await send(r);
          expect(status, `${r.kind} must be refused`).toBeGreaterThanOrEqual(400);
        }),
        { ...params, numRuns: 800 * SCALE },
      );
      await fc.assert(
        fc.asyncProperty(signedRequest(SECRET), async (r) => void (await send(r))),
        { ...params, numRuns: 400 * SCALE },
      );
    } catch (error) {
      console.error(`receiver fuzz: FAILED with seed ${SEED}; replay with LOOPS_SYNC_FUZZ_SEED=${SEED}`);
      throw error;
    }
    expect(receiver.alive()).toBe(true);
    expect(acknowledged.size, "some odd but signed events are accepted").toBeGreaterThan(0);
  });

  it("keeps good events of a concurrent burst stored when poisoned ones share their transaction", async () => {
    await fc.assert(
      fc.asyncProperty(concurrentBurst(SECRET, WRONG_SECRET), async (burst) => {
        const answers = await Promise.all(burst.map((r) => send(r)));
        burst.forEach((r, i) => {
          if (r.kind === "plausible") expect(answers[i], "a good event in a burst").toBe(200);
          if (r.kind === "poisoned") expect(answers[i], "an event Postgres cannot store").toBe(422);
        });
      }),
      { seed: SEED, numRuns: 40 * SCALE, endOnFailure: true },
    );
    expect(receiver.alive()).toBe(true);
  });

  it("answers 503 (and no other 5xx) while its database refuses connections, then recovers", {
    timeout: 60_000 * SCALE,
  }, async () => {
    const name = new URL(db.url).pathname.slice(1);
    const admin = connect(inject("databaseUrl"), { max: 1 });
    try {
      await admin.unsafe(`alter database ${name} allow_connections false`);
      await admin`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${name}`;
      const down = new Map<string, number>();
      await fc.assert(
        fc.asyncProperty(
          fc.oneof(randomRequest(), mutatedRequest(SECRET, WRONG_SECRET), signedRequest(SECRET)),
          async (r) => {
            const status = await send(r, { databaseDown: true });
            // A signed event may still be refused for its content (4xx), but never acknowledged (2xx).
            if (r.correctlySigned) {
              expect(status, "a signed event acknowledged without its database").toBeGreaterThanOrEqual(400);
            }
            down.set(`${r.kind}:${status}`, (down.get(`${r.kind}:${status}`) ?? 0) + 1);
          },
        ),
        { seed: SEED, numRuns: 150 * SCALE },
      );
      expect([...down.keys()].some((k) => k.endsWith(":503"))).toBe(true);
    } finally {
      await admin.unsafe(`alter database ${name} allow_connections true`);
      await admin.end();
    }
    const probe = plausibleSignedRequest(SECRET);
    await waitFor(async () => (await send(probe)) < 300, {
      timeoutMs: 20_000,
      what: "the receiver to store again",
    });
    expect(receiver.alive()).toBe(true);
  });

  it("stored only correctly signed events, and every one it acknowledged", async () => {
    const rows = await waitFor(async () => await db.sql<{ id: string }[]>`select id from sync.events`);
    const unsigned = rows.map((r) => r.id).filter((id) => !signedIds.has(id));
    expect(unsigned, "stored events that were not correctly signed").toEqual([]);
    const stored = new Set(rows.map((r) => r.id));
    expect(
      [...acknowledged].filter((id) => !stored.has(id)),
      "acknowledged but not stored",
    ).toEqual([]);
    console.log(
      `receiver fuzz: seed ${SEED}, answers by status ${JSON.stringify(Object.fromEntries(statuses))}, stored ${rows.length}`,
    );
  });
});
