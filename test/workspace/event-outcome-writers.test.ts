import path from "node:path";
import { describe, expect, it } from "vitest";
import { findByOwner } from "../support/source-files.ts";

/** The one module allowed to write `sync.events.outcome` (its state machine is documented there). */
const OWNER = path.join("packages", "db", "src", "event-outcomes");

/**
 * Statements that set `sync.events.outcome`: an UPDATE's SET list, an INSERT's column list, an upsert's
 * DO UPDATE SET list, or a Kysely update/insert of the table naming the column. Each match is read inside
 * one SQL template (no backtick crossed).
 */
const WRITES: { pattern: RegExp; names: (match: RegExpMatchArray) => string }[] = [
  {
    pattern:
      /update\s+sync\.events\b(?:\s+(?:as\s+)?\w+)?\s+set\b([^`]*?)(?:\bwhere\b|\bfrom\b|\breturning\b|`|$)/gi,
    names: (m) => m[1]!,
  },
  {
    pattern: /insert\s+into\s+sync\.events\s*\(([^)`]*)\)/gi,
    names: (m) => m[1]!.replace(/\boutcome_at\b/g, ""),
  },
  {
    pattern:
      /insert\s+into\s+sync\.events\b[^`]*?do\s+update\s+set\b([^`]*?)(?:\bwhere\b|\breturning\b|`|$)/gi,
    names: (m) => m[1]!,
  },
  { pattern: /(?:updateTable|insertInto)\(\s*["']sync\.events["']\s*\)([^;]*)/g, names: (m) => m[1]! },
];

/** `file: statement` for each write of the outcome column in `text`. */
function outcomeWrites(file: string, text: string): string[] {
  const found: string[] = [];
  for (const { pattern, names } of WRITES)
    for (const m of text.matchAll(pattern))
      if (/\boutcome\b(?!_)/.test(names(m))) found.push(`${file}: ${m[0].replace(/\s+/g, " ").slice(0, 80)}`);
  return found;
}

describe("one module writes sync.events.outcome", () => {
  it("no SQL outside packages/db/src/event-outcomes/ sets the outcome", async () => {
    expect(await findByOwner(OWNER, false, outcomeWrites)).toEqual([]);
  });

  it("finds the owner's own writes, so the check above can see one", async () => {
    const owned = await findByOwner(OWNER, true, outcomeWrites);
    // settleEvents, settleRefreshedEvents, settleOrderEvents, settleCoveredOrderEvents,
    // skipRevokedMerchantEvents, settleUnknownMerchantEvents, reopenEvents.
    expect(owned.length).toBeGreaterThanOrEqual(7);
  });

  it("recognises each form a write may take", () => {
    const forms = [
      "update sync.events set outcome = 'failed' where id = $1",
      "update sync.events as e set error = null, outcome = s.outcome from s",
      "insert into sync.events (id, type, outcome) values ($1, $2, 'pending')",
      "insert into sync.events (id) values ($1) on conflict (id) do update set outcome = excluded.outcome",
      'db.updateTable("sync.events").set({ outcome: "applied" })',
    ];
    for (const form of forms) expect(outcomeWrites("x.ts", form)).toHaveLength(1);
    const reads = [
      "update sync.events set outcome_at = now() where outcome = 'pending'",
      "insert into sync.events (id, outcome_at) values ($1, now())",
      "update sync.events_archive set outcome = 'applied'",
    ];
    for (const read of reads) expect(outcomeWrites("x.ts", read)).toEqual([]);
  });
});
