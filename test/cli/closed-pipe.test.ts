// A reader that goes away (`| head`) ends every verb quietly: no EPIPE stack trace, the verb's own exit code.
// Real shell pipelines over the real command.
import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";
import { bin } from "../support/operator-run.ts";
import { writeNewOrders } from "../support/write-changes.ts";

interface Piped {
  stdout: string;
  stderr: string;
  /** loops-sync's own exit status (PIPESTATUS[0]), not head's. */
  status: number;
}

/** Runs `loops-sync <args> | <reader>` in bash. */
function pipeline(args: string, reader: string, env: Record<string, string> = {}): Promise<Piped> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", `'${bin}' ${args} | ${reader}; echo "status=\${PIPESTATUS[0]}" >&2`], {
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", LOG_LEVEL: "silent", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d));
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    child.once("error", reject);
    child.once("close", () => {
      const status = Number(/status=(\d+)\n$/.exec(stderr)?.[1] ?? Number.NaN);
      resolve({ stdout, stderr: stderr.replace(/status=\d+\n$/, ""), status });
    });
  });
}

describe("a closed pipe", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await writeNewOrders(db.sql, "pipe", 3);
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("ends `sandbox --help | head -1` quietly", async () => {
    const r = await pipeline("sandbox --help", "head -1");
    expect(r).toEqual({ stdout: "Usage: loops-sync sandbox [options]\n", stderr: "", status: 0 });
  });

  it("ends a verb whose stdout was closed before it wrote anything quietly (EPIPE on its first write)", async () => {
    const child = spawn(bin, ["sandbox", "--help"], {
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    // Our end of its stdout is gone long before Node has started: every write of the child fails.
    child.stdout.destroy();
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  });

  it("ends `status --json | head -c 10` quietly", async () => {
    const r = await pipeline("status --json", "head -c 10", { DATABASE_URL: db.url });
    expect(r).toEqual({ stdout: '{\n  "gener', stderr: "", status: 0 });
  });

  it("ends `changes --follow --json | head -1` quietly at its next write", async () => {
    const running = pipeline("changes --follow --json", "head -1", { DATABASE_URL: db.url });
    let done: Piped | undefined;
    void running.then((r) => (done = r));
    // head has its line after the first change; the follower learns the pipe is closed when it next
    // writes, so commits keep coming until the pipeline has ended.
    for (let i = 0; !done && i < 300; i++) {
      await writeNewOrders(db.sql, `more${i}`, 1);
      await new Promise((r) => setTimeout(r, 100));
    }
    const r = await running;
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ resource: "order", resource_id: "ord_pipe_0" });
  });
});
