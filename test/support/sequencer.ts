// The order vitest starts test files in. Without durations of an earlier run (a fresh clone, as on CI) vitest
// starts the largest files first, and the longest files are short ones that wait on processes: the upgrade
// test, started last, would run alone for minutes after every other file is done. These files start first,
// in this order; the rest follow in vitest's own order (the longest first when it has durations).
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** Files that take minutes on a 2-core machine (`.reports/vitest.json` has each file's time), longest first. */
export const SLOW_FILES: readonly string[] = [
  // Minutes of a previous release's install, seeding and 30 s of phases, mostly waiting: small, so last by size.
  "test/upgrade/rolling-upgrade.test.ts",
  // The packed CLI's build and npm installs (Node 22 and 26 too).
  "test/package/install.test.ts",
  // A clone, its install and the 10 s demo on embedded PostgreSQL.
  "test/first-run/first-run.test.ts",
  "test/first-run/embedded-start.test.ts",
  // Fifteen and more CLI processes against a standby cluster of their own.
  "test/standby/standby-refusals.test.ts",
  // Waits for a killed worker's jobs to be released (its heartbeat 60 s old).
  "test/chaos/convergence.test.ts",
  "test/standby/standby-readers.test.ts",
  "test/package/schema-install.test.ts",
  "test/package/gateway-client-install.test.ts",
];

export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (spec: TestSpecification) => {
      const i = SLOW_FILES.findIndex((slow) => spec.moduleId.endsWith(`/${slow}`));
      return i === -1 ? SLOW_FILES.length : i;
    };
    // A stable sort: files not in the list keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
