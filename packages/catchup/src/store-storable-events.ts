import type { Logger } from "@loops-sync/config";
import {
  type EventSource,
  type StoreEventsResult,
  storeEventsAndEnqueue,
  type TransactionSql,
  unstorableReason,
} from "@loops-sync/db";
import type { Event } from "@loops-sync/loops-client";

/** An event Postgres can never store, and why (SQLSTATE and Postgres's message). */
export interface RefusedEvent {
  event: Event;
  reason: string;
}

export interface StorableEvents {
  /** Ids newly stored (see storeEventsAndEnqueue). */
  inserted: string[];
  /** Recorded in sync.refused_events instead of being stored. */
  refused: RefusedEvent[];
}

export interface StoreStorableOptions {
  source: EventSource;
  applicationId: string | undefined;
  logger?: Logger | undefined;
}

/**
 * `storeEventsAndEnqueue` for a page some of whose events Postgres refuses for their content (a JSON string
 * holding `\u0000`, which jsonb cannot hold; which errors are content: `unstorableReason`): each attempt runs
 * in a savepoint of `tx`, and a content refusal splits the events in halves until each refused one is alone,
 * as the receiver's group commit does. The refused are recorded in sync.refused_events with the reason and the
 * rest are stored, so the caller's cursor can move past them. Any other error is thrown.
 */
export async function storeStorableEvents(
  tx: TransactionSql,
  merchantId: string,
  events: readonly Event[],
  options: StoreStorableOptions,
): Promise<StorableEvents> {
  const result: StorableEvents = { inserted: [], refused: [] };
  const attempt = async (part: readonly Event[]): Promise<void> => {
    if (part.length === 0) return;
    let stored: StoreEventsResult;
    try {
      stored = await tx.savepoint((sp) =>
        storeEventsAndEnqueue(sp, part, { source: options.source, applicationId: options.applicationId }),
      );
    } catch (error) {
      if (!unstorableReason(error)) throw error;
      if (part.length === 1) {
        const { code, message } = error as { code: string; message: string };
        result.refused.push({
          event: part[0]!,
          reason: `Postgres refused the event (SQLSTATE ${code}): ${message}`,
        });
        return;
      }
      const half = Math.ceil(part.length / 2);
      await attempt(part.slice(0, half));
      await attempt(part.slice(half));
      return;
    }
    result.inserted.push(...stored.inserted);
  };
  await attempt(events);
  if (result.refused.length > 0) {
    await recordRefusedEvents(tx, merchantId, options.source, result.refused);
    for (const { event, reason } of result.refused) {
      options.logger?.warn(
        { merchantId, eventId: clean(event.id), reason },
        "event refused: it can never be stored",
      );
    }
  }
  return result;
}

/** Text Postgres can hold: a NUL (the usual reason for the refusal) becomes U+FFFD. */
const clean = (text: unknown): string | null =>
  typeof text === "string" ? text.replaceAll("\u0000", "\uFFFD") : null;

async function recordRefusedEvents(
  tx: TransactionSql,
  merchantId: string,
  source: EventSource,
  refused: readonly RefusedEvent[],
): Promise<void> {
  const createdAt = (e: Event) => {
    const at = typeof e.created_at === "string" ? Date.parse(e.created_at) : Number.NaN;
    return Number.isNaN(at) ? null : new Date(at).toISOString();
  };
  await tx`
    insert into sync.refused_events (id, merchant_id, type, created_at, source, reason)
    select * from unnest(
      ${refused.map((r) => clean(r.event.id) ?? "")}::text[], ${refused.map(() => merchantId)}::text[],
      ${refused.map((r) => clean(r.event.type))}::text[], ${refused.map((r) => createdAt(r.event))}::timestamptz[],
      ${refused.map(() => source)}::text[], ${refused.map((r) => clean(r.reason) ?? "")}::text[])
    on conflict (id) do nothing`;
}
