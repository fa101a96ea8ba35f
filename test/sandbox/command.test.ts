import { spawn } from "node:child_process";
import { once } from "node:events";
import { createSandboxCommand } from "@loops-sync/sandbox";
import { describe, expect, it } from "vitest";

describe("loops-sync sandbox command", () => {
  it("lists every flag in --help", () => {
    const command = createSandboxCommand();
    const help = command.helpInformation();
    const flags = command.options.map((o) => o.long!);
    expect(flags).toEqual(
      expect.arrayContaining([
        "--port",
        "--host",
        "--seed-file",
        "--time-scale",
        "--webhook-url",
        "--webhook-secret",
        "--generate-rate",
        "--drop-rate",
        "--rate-limit-rate",
        "--token-ttl",
        "--clock-skew",
      ]),
    );
    for (const flag of flags) expect(help).toContain(flag);
  });

  it("prints its address, demo credentials and the env for loops-sync, then serves tokens until SIGTERM", async () => {
    const script = `import { createSandboxCommand } from "@loops-sync/sandbox"; await createSandboxCommand().parseAsync(["--port", "0", "--drop-rate", "0.5"], { from: "user" });`;
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      cwd: process.cwd(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.setEncoding("utf8");
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no startup line; stdout: ${out}`)), 10_000);
      child.stdout.on("data", (chunk: string) => {
        out += chunk;
        if (out.includes("LOOPS_WEBHOOK_SECRETS=")) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
    const [first] = out.split("\n");
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(first!)?.[1];
    expect(url).toBeDefined();
    expect(first).toContain("sandbox-client / sandbox-secret");
    expect(out).toContain(`LOOPS_API_URL=${url}/v1`);
    expect(out).toContain(`LOOPS_AUTH_URL=${url}/oauth/token`);
    const token = await fetch(`${url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "grant_type=client_credentials&client_id=sandbox-client&client_secret=sandbox-secret",
    });
    expect(token.status).toBe(200);
    const faults = (await (await fetch(`${url}/admin/faults`)).json()) as { webhookDropRate: number };
    expect(faults.webhookDropRate).toBe(0.5);
    child.kill("SIGTERM");
    const [code] = await once(child, "exit");
    expect(code).toBe(0);
  });
});
