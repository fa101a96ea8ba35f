import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT, sourceFiles } from "../support/source-files.ts";

/**
 * A process_events job added through enqueueJob's spec (a task with its payload: a metric's `task` label has
 * none), or by SQL that names the task itself.
 */
const ADDS = /task:\s*"process_events",\s*payload\b|taskName\(\s*"process_events"\s*\)/g;
/** The attempts given from the one constant, as enqueueJob's option or add_job's SQL argument. */
const GIVES =
  /maxAttempts:\s*PROCESS_EVENTS_MAX_ATTEMPTS\b|max_attempts\s*=>\s*\$\{PROCESS_EVENTS_MAX_ATTEMPTS\}/g;

const count = (text: string, pattern: RegExp) => [...text.matchAll(pattern)].length;

describe("process_events attempts are decided once (PROCESS_EVENTS_MAX_ATTEMPTS in @loops-sync/db)", () => {
  it("every place that adds a process_events job gives it PROCESS_EVENTS_MAX_ATTEMPTS", async () => {
    const offenders: string[] = [];
    let sites = 0;
    for (const file of await sourceFiles({ tests: false })) {
      const text = await readFile(path.join(REPO_ROOT, file), "utf8");
      const adds = count(text, ADDS);
      sites += adds;
      if (adds !== count(text, GIVES)) offenders.push(`${file}: ${adds} job(s), ${count(text, GIVES)} given`);
    }
    expect(offenders).toEqual([]);
    // The inbox, `replay`, `replay --failed` and confirm_merchant: the check above sees them.
    expect(sites).toBeGreaterThanOrEqual(4);
  });

  it("recognises each form an added job and its attempts may take", () => {
    expect(count('enqueueJob(tx, { task: "process_events", payload, maxAttempts: 25 })', ADDS)).toBe(1);
    expect(count('enqueueJob(tx, { task: "process_events", payload, maxAttempts: 25 })', GIVES)).toBe(0);
    expect(count('jobSeconds.startTimer({ task: "process_events" })', ADDS)).toBe(0);
    expect(count("maxAttempts: PROCESS_EVENTS_MAX_ATTEMPTS,", GIVES)).toBe(1);
    expect(count(`add_job(\${taskName("process_events")}::text, payload, max_attempts => 25)`, ADDS)).toBe(1);
    expect(count(`max_attempts => \${PROCESS_EVENTS_MAX_ATTEMPTS}::int`, GIVES)).toBe(1);
  });
});
