import { describe, expect, it } from "vitest";
import { coalescing, type RoundEnd } from "./coalescing.ts";

/** A round the test lets end: each call waits for `next()`, then says what `ends` holds next. */
function heldRounds(ends: RoundEnd[] = []) {
  let rounds = 0;
  let running = 0;
  let most = 0;
  const releases: Array<() => void> = [];
  return {
    round: async (): Promise<RoundEnd> => {
      rounds++;
      running++;
      most = Math.max(most, running);
      await new Promise<void>((resolve) => releases.push(resolve));
      running--;
      return ends.shift();
    },
    next: async () => {
      while (releases.length === 0) await new Promise((r) => setImmediate(r));
      releases.shift()!();
      await new Promise((r) => setImmediate(r));
    },
    rounds: () => rounds,
    most: () => most,
  };
}

describe("coalescing", () => {
  it("runs one round at a time, and one more round for any number of wake-ups during a round", async () => {
    const r = heldRounds();
    const loop = coalescing(r.round);
    const first = loop.run();
    const joined = [loop.run(), loop.run(), loop.run()];
    expect(joined.every((p) => p === first)).toBe(true);
    await r.next();
    expect(r.rounds()).toBe(2);
    await r.next();
    await first;
    expect(r.rounds()).toBe(2);
    expect(r.most()).toBe(1);
    expect(loop.running).toBe(false);
  });

  it("lets a caller wait for the running loop's end without asking for another round", async () => {
    const r = heldRounds();
    const loop = coalescing(r.round);
    void loop.run();
    const ended = loop.ended();
    await r.next();
    await ended;
    expect(r.rounds()).toBe(1);
    expect(loop.running).toBe(false);
    await loop.ended();
  });

  it("goes on while a round says more, and stops at done even when woken", async () => {
    const r = heldRounds(["more", "more", "done"]);
    let ended = 0;
    const loop = coalescing(r.round, () => ended++);
    const done = loop.run();
    await r.next();
    await r.next();
    void loop.run();
    await r.next();
    await done;
    expect(r.rounds()).toBe(3);
    expect(ended).toBe(1);
  });

  it("starts a new loop from onEnd, after the old one has ended", async () => {
    let rounds = 0;
    let restarted = false;
    const loop = coalescing(
      async () => {
        rounds++;
        return undefined;
      },
      () => {
        if (!restarted) {
          restarted = true;
          void loop.run();
        }
      },
    );
    await loop.run();
    await new Promise((r) => setImmediate(r));
    expect(rounds).toBe(2);
  });
});
