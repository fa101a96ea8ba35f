import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { createLogger } from "./logger.ts";
import { createStopStack } from "./stop-stack.ts";

function capture() {
  const lines: { part?: string; error?: string; msg: string }[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { lines, logger: createLogger({ name: "test", pretty: false, destination }) };
}

const tick = () => new Promise((r) => setTimeout(r, 5));

describe("createStopStack", () => {
  it("stops the last part started first", async () => {
    const { logger } = capture();
    const stack = createStopStack({ logger });
    const order: string[] = [];
    for (const name of ["pool", "admin", "worker", "receiver"]) {
      stack.push(name, async () => {
        await tick();
        order.push(name);
      });
    }
    expect(await stack.stopAll()).toEqual([]);
    expect(order).toEqual(["receiver", "worker", "admin", "pool"]);
  });

  it("logs each failure with its part's name, and still stops the rest", async () => {
    const { logger, lines } = capture();
    const stack = createStopStack({ logger });
    const stopped: string[] = [];
    stack.push("pool", () => stopped.push("pool"));
    stack.push("worker", () => {
      throw new Error("worker would not stop");
    });
    stack.push("receiver", async () => {
      await tick();
      throw new Error("receiver would not close");
    });
    const failures = await stack.stopAll();
    expect(failures.map((f) => [f.name, (f.error as Error).message])).toEqual([
      ["receiver", "receiver would not close"],
      ["worker", "worker would not stop"],
    ]);
    expect(stopped).toEqual(["pool"]);
    expect(lines.map((l) => [l.msg, l.part, l.error])).toEqual([
      ["stop failed", "receiver", "receiver would not close"],
      ["stop failed", "worker", "worker would not stop"],
    ]);
  });

  it("runs stops pushed beside one another at once, after the layer above and before the one below", async () => {
    const { logger } = capture();
    const stack = createStopStack({ logger });
    const events: string[] = [];
    const slow = (name: string) => async () => {
      events.push(`${name} begins`);
      await tick();
      events.push(`${name} ends`);
    };
    stack.push("queue", slow("queue"));
    stack.push("runner", slow("runner"));
    stack.beside("refresher", slow("refresher"));
    stack.push("timer", slow("timer"));
    await stack.stopAll();
    expect(events).toEqual([
      "timer begins",
      "timer ends",
      "runner begins",
      "refresher begins",
      "runner ends",
      "refresher ends",
      "queue begins",
      "queue ends",
    ]);
  });

  it("stops each part once, however often stopAll is called, and refuses a part pushed while stopping", async () => {
    const { logger } = capture();
    const stack = createStopStack({ logger });
    let stops = 0;
    stack.push("part", async () => {
      await tick();
      stops += 1;
    });
    const [a, b] = await Promise.all([stack.stopAll(), stack.stopAll()]);
    await stack.stopAll();
    expect([a, b, stops]).toEqual([[], [], 1]);
    expect(() => stack.push("late", () => {})).toThrow(/pushed after stopAll began/);
  });
});
