import { readFile } from "node:fs/promises";
import path from "node:path";
import { CHANGE_RESOURCES } from "@loops-sync/schema";
import { describe, expect, it } from "vitest";
import { REPO_ROOT, sourceFiles } from "../support/source-files.ts";

/** The one writer of `replica.changes` (its insert takes the feed's commit-order lock, migration 0011). */
const WRITER = path.join("packages", "db", "src", "change-feed", "record-changes.ts");
/** The one place the feed's names are written (resources, sources, the NOTIFY channel). */
const NAMES = path.join("packages", "schema", "src", "change-feed.ts");

async function read(file: string): Promise<string> {
  return readFile(path.join(REPO_ROOT, file), "utf8");
}

/** `file: statement` for each insert into, or update of, `replica.changes` in `text`. */
function feedWrites(file: string, text: string): string[] {
  const writes =
    /\b(?:insert\s+into|update)\s+replica\.changes\b|\b(?:insertInto|updateTable)\(\s*["']replica\.changes["']/gi;
  return [...text.matchAll(writes)].map((m) => `${file}: ${m[0]}`);
}

/**
 * Each `recordChanges(tx, …)` call (comments left out) after which its block still uses the transaction:
 * the insert takes the feed's lock until COMMIT, so a statement after it holds up every other writer. A
 * call whose block returns (or ends) without touching `tx` again runs last.
 */
function notLast(file: string, text: string): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(/\brecordChanges\(\s*(\w+)/g)) {
    const lineStart = text.lastIndexOf("\n", m.index) + 1;
    if (/^\s*(?:\*|\/\/)/.test(text.slice(lineStart, m.index))) continue;
    const tx = m[1]!;
    // From the call's "(": the call ends where its depth is 0 again, its block where the depth drops below.
    let depth = 0;
    let callEnd = -1;
    let end = m.index + "recordChanges".length;
    for (; end < text.length; end++) {
      const c = text[end]!;
      if ("{([".includes(c)) depth++;
      else if ("})]".includes(c) && --depth < 0) break;
      else if (depth === 0 && callEnd < 0) callEnd = end;
    }
    const rest = text.slice(callEnd + 1, end);
    if (new RegExp(`\\b${tx}\\b`).test(rest))
      found.push(`${file}:${text.slice(0, m.index).split("\n").length}: ${tx} is used after recordChanges`);
  }
  return found;
}

describe("the change feed has one writer and one list of names", () => {
  it(`no file but ${WRITER} inserts into or updates replica.changes`, async () => {
    const offenders: string[] = [];
    for (const file of await sourceFiles({ names: /\.(ts|sql)$/ }))
      if (file !== WRITER) offenders.push(...feedWrites(file, await read(file)));
    expect(offenders).toEqual([]);
    expect(feedWrites(WRITER, await read(WRITER))).toHaveLength(1);
  });

  it("every recordChanges call is the last use of its transaction in its block", async () => {
    const offenders: string[] = [];
    let calls = 0;
    for (const file of await sourceFiles({ tests: false })) {
      if (file === WRITER) continue;
      const text = await read(file);
      calls += [...text.matchAll(/\brecordChanges\(/g)].length;
      offenders.push(...notLast(file, text));
    }
    expect(offenders).toEqual([]);
    expect(calls).toBeGreaterThanOrEqual(15);
  });

  it("sees a statement after recordChanges", () => {
    const late =
      "await tx.begin(async (tx) => {\n  await recordChanges(tx, changes);\n  await tx`update x`;\n});";
    expect(notLast("x.ts", late)).toHaveLength(1);
    const last =
      "await sql.begin(async (tx) => {\n  await recordChanges(tx, changes);\n  return n;\n});\nawait tx`x`;";
    expect(notLast("x.ts", last)).toEqual([]);
  });

  it(`no file but ${NAMES} spells out the NOTIFY channel`, async () => {
    const offenders: string[] = [];
    for (const file of await sourceFiles())
      if (file !== NAMES && /["'`]loops_sync_changes["'`]/.test(await read(file))) offenders.push(file);
    expect(offenders).toEqual([]);
  });

  it("the forwarder's body has one CASE branch per resource of CHANGE_RESOURCES", async () => {
    const text = await read(path.join("apps", "worker", "src", "forwarding", "delivery-transitions.ts"));
    const branches = [...text.matchAll(/when '(\w+)' then\s+\(select r\.raw from replica\./g)].map(
      (m) => m[1],
    );
    expect(branches.sort()).toEqual([...CHANGE_RESOURCES].sort());
  });
});
