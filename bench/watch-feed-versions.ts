import type { Sql } from "@loops-sync/db";

export interface FeedWatch {
  /** Changes the reader has read so far, and the last position it holds. */
  read(): { changes: number; position: number };
  /** Stops listening. */
  close(): Promise<void>;
}

const PAGE = 1000;

/**
 * A backend's reader of the change feed, as docs/feed.md shows it: `LISTEN loops_sync_changes`, and
 * on each notification `replica.read_changes(cursor, 1000)` until a short page, continuing after the last
 * position read. Calls `onVersion` with each order change as the reader holds it.
 */
export async function watchFeedVersions(
  sql: Sql,
  onVersion: (orderId: string, version: number, at: number) => void,
): Promise<FeedWatch> {
  let position = 0;
  let changes = 0;
  let reading = false;
  let again = false;
  const drain = async (): Promise<void> => {
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    try {
      do {
        again = false;
        for (;;) {
          const rows = await sql<
            { position: number; resource: string; resource_id: string; version: number | null }[]
          >`
            select position, resource, resource_id, version from replica.read_changes(${position}, ${PAGE})`;
          const at = performance.now();
          for (const r of rows) {
            if (r.resource === "order" && r.version !== null) onVersion(r.resource_id, r.version, at);
          }
          changes += rows.length;
          if (rows.length > 0) position = rows.at(-1)!.position;
          if (rows.length < PAGE) break;
        }
      } while (again);
    } finally {
      reading = false;
    }
  };
  const listening = await sql.listen("loops_sync_changes", () => {
    drain().catch((error: unknown) => process.stderr.write(`feed reader: ${String(error)}\n`));
  });
  await drain();
  return {
    read: () => ({ changes, position }),
    close: () => listening.unlisten(),
  };
}
