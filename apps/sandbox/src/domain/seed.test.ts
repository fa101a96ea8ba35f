import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ProblemError } from "../problem.ts";
import { defaultSeed, loadSeedFile } from "./seed.ts";

describe("seed", () => {
  it("loads the example seed file with defaults filled in", async () => {
    const seed = await loadSeedFile(new URL("../../seed.example.json", import.meta.url).pathname);
    expect(seed.merchants[0]!.brands[0]!.locations[0]).toMatchObject({
      city: "Riyadh",
      timezone: "Asia/Riyadh",
    });
    expect(seed.applications[0]!.scopes).toContain("orders:read");
  });

  it("names the file and the first problem of a bad seed", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sandbox-seed-"));
    const bad = join(dir, "bad.json");
    await writeFile(bad, JSON.stringify({ applications: [], channels: [], merchants: [] }));
    await expect(loadSeedFile(bad)).rejects.toThrow(ProblemError);
    await expect(loadSeedFile(bad)).rejects.toThrow(/bad\.json: applications: /);
    await writeFile(bad, "{ not json");
    await expect(loadSeedFile(bad)).rejects.toThrow(/not valid JSON/);
    await expect(loadSeedFile(join(dir, "missing.json"))).rejects.toThrow(/cannot read seed file/);
  });

  it("seeds two demo merchants on Riyadh time with two locations each", () => {
    const seed = defaultSeed();
    expect(seed.merchants.map((m) => m.id)).toEqual(["mer_demo_1", "mer_demo_2"]);
    for (const m of seed.merchants) expect(m.brands.flatMap((b) => b.locations)).toHaveLength(2);
  });
});
