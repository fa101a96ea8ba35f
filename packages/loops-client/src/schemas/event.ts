import { z } from "zod";
import { openEnum } from "./open-enum.ts";

/** What caused a change; `application_id` equal to ours means we caused it. */
export const EventOriginSchema = z.looseObject({
  type: openEnum("event.origin.type", ["channel", "api", "web_app", "system"]),
  application_id: z.string().nullish(),
});
export type EventOrigin = z.output<typeof EventOriginSchema>;

/**
 * The event envelope, the same for GET /events and webhooks. `type` is any string: the spec lists
 * only some types, and an unknown type must be recorded, never rejected.
 */
export const EventSchema = z.looseObject({
  id: z.string(),
  type: z.string(),
  created_at: z.string(),
  merchant_id: z.string(),
  location_id: z.string().nullish(),
  connection_id: z.string(),
  origin: EventOriginSchema,
  data: z.record(z.string(), z.unknown()),
});
export type Event = z.output<typeof EventSchema>;

export const EventsPageSchema = z.looseObject({ data: z.array(EventSchema), has_more: z.boolean() });
/** A page of GET /events: oldest first; ask again with `after` = the last id while `has_more`. */
export type EventsPage = z.output<typeof EventsPageSchema>;

/** The body of a redeliver answer is not specified; whatever comes back is kept. */
export const RedeliverResultSchema = z.unknown();
export type RedeliverResult = unknown;
