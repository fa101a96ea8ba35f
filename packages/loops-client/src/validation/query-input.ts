import { z } from "zod";
import { dateTime, id, pageLimit } from "./rules.ts";

const nonEmpty = z.string().min(1, "expected a non-empty string");

/** Query of GET /orders; every filter the spec lists. */
export const OrdersListQuery = z.strictObject({
  location_id: id.optional(),
  channel: nonEmpty.optional(),
  status: nonEmpty.optional(),
  updated_since: dateTime.optional(),
  created_from: dateTime.optional(),
  created_to: dateTime.optional(),
  limit: pageLimit.optional(),
  cursor: nonEmpty.optional(),
});
export type OrdersListParams = z.input<typeof OrdersListQuery>;

/** Query of a plain paged list (locations, brands). */
export const PageQuery = z.strictObject({ limit: pageLimit.optional(), cursor: nonEmpty.optional() });
export type PageParams = z.input<typeof PageQuery>;

const eventType = z
  .string()
  .regex(
    /^(\*|[a-z0-9_]+(\.([a-z0-9_]+|\*))*)$/,
    "expected an event type such as order.status_changed or order.*",
  );

/** Query of GET /events: `types` as an array or a comma-separated string, wildcards allowed. */
export const EventsListQuery = z.strictObject({
  after: id.optional(),
  types: z
    .union([z.array(eventType).min(1, "expected at least one event type"), z.string()])
    .transform((v, ctx) => {
      const list = typeof v === "string" ? v.split(",").map((s) => s.trim()) : v;
      for (const [i, t] of list.entries()) {
        if (!eventType.safeParse(t).success) {
          ctx.addIssue({
            code: "custom",
            message: `expected an event type such as order.* (got "${t}")`,
            path: [i],
          });
          return z.NEVER;
        }
      }
      return list.join(",");
    })
    .optional(),
  limit: pageLimit.optional(),
});
export type EventsListParams = z.input<typeof EventsListQuery>;
