import { readFile } from "node:fs/promises";
import { REGENERATE_COMMAND, renderDatabaseTypes } from "@loops-sync/schema";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../support/db.ts";

const GENERATED = new URL("../../packages/schema/src/database.ts", import.meta.url);

/** Where two texts first differ, as "line N: committed … / migrated …", or null when they are equal. */
function firstDifference(committed: string, migrated: string): string | null {
  const a = committed.split("\n");
  const b = migrated.split("\n");
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i])
      return `line ${i + 1}: committed ${JSON.stringify(a[i])}, migrated ${JSON.stringify(b[i])}`;
  }
  return null;
}

describe("@loops-sync/schema's generated types", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db?.drop();
  });

  it("match the migrated schema (run the regenerate command after changing a migration)", async () => {
    const committed = await readFile(GENERATED, "utf8");
    const migrated = await renderDatabaseTypes(db.sql);
    const difference = firstDifference(committed, migrated);
    expect(
      difference,
      `packages/schema/src/database.ts does not match migrations/ (${difference}); ` +
        `run \`${REGENERATE_COMMAND}\` and commit the result`,
    ).toBeNull();
  });

  it("type a column a migration adds, with its nullability and default", async () => {
    await db.sql.unsafe(`
      alter table replica.orders add column drift_probe bigint not null default 0;
      create view reporting.drift_probe as select id, version from replica.orders`);
    const rendered = await renderDatabaseTypes(db.sql);
    expect(rendered).toContain("  drift_probe: Generated<number>;");
    expect(rendered).toMatch(
      /export interface ReportingDriftProbe \{\n {2}id: string \| null;\n {2}version: number \| null;\n\}/,
    );
    expect(rendered).toContain('  "reporting.drift_probe": ReportingDriftProbe;');
    expect(firstDifference(await readFile(GENERATED, "utf8"), rendered)).not.toBeNull();
  });
});
