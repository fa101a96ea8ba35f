// `node bench/apply-batch-probe.ts [--orders 1000]`: what one replica write costs alone and in batches, on
// the run's own database. One order per transaction with its events resolved is what each refresh_order
// job does; `applyOrdersIfNewer` in batches is what a batched refresh (and the catch-up list path) does.
import { parseArgs } from "node:util";
import { applyOrdersIfNewer } from "@loops-sync/replica";
import { startSandbox } from "@loops-sync/sandbox";
import { resolveOrderEvents } from "@loops-sync/worker";
import { openBenchServer } from "./bench-database.ts";
import { describeMachine, formatLoad } from "./machine.ts";

const { values } = parseArgs({ options: { orders: { type: "string", default: "1000" } } });
const count = Number(values.orders);
const server = await openBenchServer();
const db = await server.createDatabase();
const sandbox = await startSandbox({ port: 0 });
try {
  const orders = Array.from({ length: count }, (_, i) =>
    sandbox.createOrder({ merchantId: sandbox.merchantIds[i % sandbox.merchantIds.length]! }),
  );
  // Each pass writes every order at a newer version, so every write passes the version gate.
  let pass = 0;
  const newer = () => {
    pass++;
    return orders.map((o) => ({ ...o, version: o.version + pass }));
  };
  const perOrder = async (work: () => Promise<void>) => {
    const started = performance.now();
    await work();
    return (performance.now() - started) / count;
  };
  const one = await perOrder(async () => {
    for (const o of newer()) {
      await db.sql.begin(async (tx) => {
        const [r] = await applyOrdersIfNewer(tx, [o]);
        await resolveOrderEvents(tx, {
          merchantId: o.merchant_id,
          orderId: o.id,
          versionBefore: r!.previousVersion,
          receivedBefore: new Date(),
        });
      });
    }
  });
  const rows = [`one per transaction, events resolved: ${one.toFixed(2)} ms per order`];
  for (const size of [10, 50, 100]) {
    const list = newer();
    const ms = await perOrder(async () => {
      for (let i = 0; i < list.length; i += size) {
        await db.sql.begin((tx) => applyOrdersIfNewer(tx, list.slice(i, i + size)));
      }
    });
    rows.push(`batches of ${size}: ${ms.toFixed(2)} ms per order (${(one / ms).toFixed(1)}× less)`);
  }
  console.log(`${count} orders, load average ${formatLoad(await describeMachine())}`);
  for (const row of rows) console.log(row);
} finally {
  await sandbox.close();
  await db.drop();
  await server.close();
}
