import { describe, expect, it } from "vitest";
import { createGroupCommit } from "./group-commit.ts";

/** A commit function whose calls are recorded and finished by hand. */
function controlledCommit() {
  const calls: { items: number[]; finish: (error?: Error) => void }[] = [];
  const commit = (items: number[]) =>
    new Promise<string[]>((resolve, reject) => {
      calls.push({
        items,
        finish: (error) => (error ? reject(error) : resolve(items.map((i) => `ok ${i}`))),
      });
    });
  return { calls, commit };
}

const tick = () => new Promise((r) => setImmediate(r));

describe("createGroupCommit", () => {
  it("batches items submitted together, and those arriving while a commit is in flight", async () => {
    const { calls, commit } = controlledCommit();
    const group = createGroupCommit({ commit, maxConcurrentCommits: 1 });
    const first = [1, 2, 3].map((i) => group.submit(i));
    await tick();
    expect(calls.map((c) => c.items)).toEqual([[1, 2, 3]]);
    const second = [4, 5].map((i) => group.submit(i));
    await tick();
    // Still one commit: 4 and 5 wait for the next batch.
    expect(calls).toHaveLength(1);
    expect(group.queued).toBe(2);
    calls[0]!.finish();
    expect(await Promise.all(first)).toEqual(["ok 1", "ok 2", "ok 3"]);
    await tick();
    expect(calls[1]!.items).toEqual([4, 5]);
    calls[1]!.finish();
    expect(await Promise.all(second)).toEqual(["ok 4", "ok 5"]);
    await group.idle();
    expect(group.committing).toBe(0);
  });

  it("fails every item of a failing batch, and only those", async () => {
    const { calls, commit } = controlledCommit();
    const group = createGroupCommit({ commit, maxConcurrentCommits: 1 });
    const doomed = [1, 2].map((i) => group.submit(i));
    await tick();
    const later = group.submit(3);
    calls[0]!.finish(new Error("connection lost"));
    for (const p of doomed) await expect(p).rejects.toThrow("connection lost");
    await tick();
    calls[1]!.finish();
    expect(await later).toBe("ok 3");
  });

  it("respects maxBatchSize and maxConcurrentCommits", async () => {
    const { calls, commit } = controlledCommit();
    const group = createGroupCommit({ commit, maxBatchSize: 2, maxConcurrentCommits: 2 });
    const all = [1, 2, 3, 4, 5].map((i) => group.submit(i));
    await tick();
    expect(calls.map((c) => c.items)).toEqual([
      [1, 2],
      [3, 4],
    ]);
    expect(group.committing).toBe(2);
    calls[0]!.finish();
    await tick();
    expect(calls[2]!.items).toEqual([5]);
    calls[1]!.finish();
    calls[2]!.finish();
    expect(await Promise.all(all)).toHaveLength(5);
    await group.idle();
  });

  it("drops an item whose caller gave up while it waited, but not one already committing", async () => {
    const { calls, commit } = controlledCommit();
    const group = createGroupCommit({ commit, maxConcurrentCommits: 1 });
    const inFlight = new AbortController();
    const first = group.submit(1, inFlight.signal);
    await tick();
    const waiting = new AbortController();
    const dropped = group.submit(2, waiting.signal);
    const kept = group.submit(3);
    waiting.abort(new Error("gave up"));
    inFlight.abort(new Error("too late"));
    await expect(dropped).rejects.toThrow("gave up");
    calls[0]!.finish();
    expect(await first).toBe("ok 1");
    await tick();
    expect(calls[1]!.items).toEqual([3]);
    calls[1]!.finish();
    expect(await kept).toBe("ok 3");
  });
});
