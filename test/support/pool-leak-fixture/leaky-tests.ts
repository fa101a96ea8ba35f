// Run only by test/workspace/pool-leaks.test.ts, through vitest-config.ts beside it: one test per way a
// test can end with a pool, to check which ones pool-leaks.ts fails.
import { connect, type Sql } from "@loops-sync/db";
import { afterEach, it } from "vitest";

// postgres.js connects on the first query, and these pools never query: no server is needed.
const url = "postgres://postgres@127.0.0.1:9/never";
let toClose: Sql | undefined;

afterEach(async () => {
  await toClose?.end();
  toClose = undefined;
});

it("closes its pool in its own afterEach", () => {
  toClose = connect(url, { applicationName: "closed-after-each" });
});

it("leaks its pool", () => {
  connect(url, { applicationName: "leaky" });
});

it("closes its pool in the test", async () => {
  await connect(url, { applicationName: "closed-in-test" }).end();
});
