import { connect, type Sql } from "@loops-sync/db";

/** What an independent reader of the change feed saw. */
export interface FeedLog {
  /** Positions in the order they were read. */
  seen: number[];
  /** Positions that came back at or below the reader's cursor (a duplicate or an out-of-order row). */
  backwards: number[];
  /** Order changes in the order read: `resource_id`, `version` and `source`. */
  orders: { id: string; version: number; source: string }[];
  /** Read errors it rode out (a Postgres restart), by message. */
  errors: string[];
}

export interface FeedReader {
  log: FeedLog;
  /** Reads until the feed is empty once more, then stops and closes its connection. */
  drain(): Promise<FeedLog>;
}

/**
 * Reads `replica.read_changes` as a partner's backend does, always after the last position it processed, from
 * its own connection; a failed read (Postgres away) is retried after a pause, from the same cursor.
 */
export function startFeedReader(url: string, { pageSize = 50, idleMs = 20 } = {}): FeedReader {
  const log: FeedLog = { seen: [], backwards: [], orders: [], errors: [] };
  let stopping = false;
  let sql: Sql = connect(url, { max: 1, applicationName: "feed-reader" });
  const done = (async () => {
    let cursor = 0;
    for (;;) {
      const finishing = stopping;
      let rows: {
        position: string;
        resource: string;
        resource_id: string;
        version: string | null;
        source: string;
      }[];
      try {
        rows = await sql`
          select position, resource, resource_id, version, source
          from replica.read_changes(${cursor}, ${pageSize})`;
      } catch (error) {
        log.errors.push(String((error as Error).message));
        await sql.end({ timeout: 1 }).catch(() => {});
        sql = connect(url, { max: 1, applicationName: "feed-reader" });
        await new Promise((r) => setTimeout(r, 200));
        continue;
      }
      for (const row of rows) {
        const position = Number(row.position);
        if (position <= cursor) {
          log.backwards.push(position);
          continue;
        }
        log.seen.push(position);
        cursor = position;
        if (row.resource === "order")
          log.orders.push({ id: row.resource_id, version: Number(row.version), source: row.source });
      }
      if (rows.length === 0) {
        if (finishing) return;
        await new Promise((r) => setTimeout(r, idleMs));
      }
    }
  })();
  return {
    log,
    async drain() {
      stopping = true;
      await done;
      await sql.end({ timeout: 5 });
      return log;
    },
  };
}

/**
 * Order changes whose version is not above the previous change of the same order (never older over newer). A
 * confirmation may repeat the version it confirms (`source` `confirm`: the fetch showed more than the event's
 * payload had), never lower it.
 */
export function feedVersionsBackwards(log: FeedLog): string[] {
  const last = new Map<string, number>();
  const problems: string[] = [];
  for (const { id, version, source } of log.orders) {
    const before = last.get(id);
    const confirms = source === "confirm" && version === before;
    if (before !== undefined && version <= before && !confirms)
      problems.push(`${id}: ${before} then ${version}`);
    last.set(id, version);
  }
  return problems;
}
