import type { CallOptions } from "../call-options.ts";
import { LoopsError } from "../errors.ts";
import {
  type Event,
  EventSchema,
  type EventsPage,
  EventsPageSchema,
  RedeliverResultSchema,
} from "../schemas/event.ts";
import { type EventsListParams, EventsListQuery } from "../validation/query-input.ts";
import { id } from "../validation/rules.ts";
import { validateInput } from "../validation/validate-input.ts";
import { ScopedResource } from "./scoped-resource.ts";

/** The event log of one merchant (scope events:read), kept 30 days upstream. */
export class EventsResource extends ScopedResource {
  /** GET /events: oldest first after `after` (omit it to start at the oldest retained event). */
  async list(params: EventsListParams = {}, options: CallOptions = {}): Promise<EventsPage> {
    const query = validateInput(EventsListQuery, params);
    return this.send({
      method: "GET",
      route: "/events",
      path: "/events",
      query,
      schema: EventsPageSchema,
      signal: options.signal,
    });
  }

  /**
   * Pages until `has_more` is false, each asked with `after` = the previous page's last id.
   * A caller that stores a cursor per page should use this rather than `iterate`.
   */
  async *pages(
    params: EventsListParams = {},
    options: CallOptions = {},
  ): AsyncGenerator<EventsPage, void, undefined> {
    validateInput(EventsListQuery, params);
    let after = params.after;
    for (;;) {
      const page = await this.list({ ...params, after }, options);
      yield page;
      if (!page.has_more) return;
      const last = page.data.at(-1);
      // has_more with nothing in the page would ask the same question forever.
      if (!last) throw LoopsError.badResponse("GET", "/events", "has_more", "true on an empty page");
      after = last.id;
    }
  }

  /** Every event after `params.after`, oldest first. */
  async *iterate(
    params: EventsListParams = {},
    options: CallOptions = {},
  ): AsyncGenerator<Event, void, undefined> {
    for await (const page of this.pages(params, options)) yield* page.data;
  }

  /** GET /events/{event_id}. */
  async get(eventId: string, options: CallOptions = {}): Promise<Event> {
    validateInput(id, eventId, "eventId");
    return this.send({
      method: "GET",
      route: "/events/{event_id}",
      path: `/events/${encodeURIComponent(eventId)}`,
      schema: EventSchema,
      signal: options.signal,
    });
  }

  /**
   * POST /events/{event_id}/redeliver: queue the event for the webhook endpoints again. It takes
   * no Idempotency-Key, so it is not retried after a 5xx or a lost answer (a second delivery would
   * be harmless to a deduping receiver, but is still not ours to cause).
   */
  async redeliver(eventId: string, options: CallOptions = {}): Promise<unknown> {
    validateInput(id, eventId, "eventId");
    return this.send({
      method: "POST",
      route: "/events/{event_id}/redeliver",
      path: `/events/${encodeURIComponent(eventId)}/redeliver`,
      schema: RedeliverResultSchema,
      signal: options.signal,
    });
  }
}
