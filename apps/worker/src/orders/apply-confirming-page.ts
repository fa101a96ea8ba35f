import { recordChanges, type Sql } from "@loops-sync/db";
import { applyOrdersIfNewer, checkOrder, orderChanges } from "@loops-sync/replica";

/**
 * One list page of a merchant's orders through the version gate, in one transaction with its feed changes:
 * an unconfirmed row at the page's version is confirmed (its feed change only when what a reader sees
 * differs: source `confirm`), a newer order applied. An order the replica cannot store is left out (the
 * queue's fetch records it). Resolves with how many of the merchant's rows are still unconfirmed.
 */
export async function applyConfirmingPage(
  sql: Sql,
  merchantId: string,
  orders: readonly unknown[],
): Promise<number> {
  const valid = orders.filter((o) => {
    try {
      return checkOrder(o).merchant_id === merchantId;
    } catch {
      return false;
    }
  });
  return await sql.begin(async (tx) => {
    const results =
      valid.length > 0 ? await applyOrdersIfNewer(tx, valid, { openEvent: true, source: "confirm" }) : [];
    const [row] = await tx<{ n: number }[]>`
      select count(*)::int as n from replica.orders
      where merchant_id = ${merchantId} and unconfirmed_since is not null`;
    // Last: it takes the feed's lock until COMMIT.
    await recordChanges(tx, orderChanges(results, "confirm"));
    return row?.n ?? 0;
  });
}
