import { z } from "zod";
import type { CallOptions } from "../call-options.ts";
import { LoopsError } from "../errors.ts";
import { flattenPages, iterateCursorPages } from "../paginate.ts";
import { type Page, pageSchema } from "../schemas/common.ts";
import { checkStorable, type Order, OrderSchema, parseOrder } from "../schemas/order.ts";
import { formatIssuePath } from "../validation/format-issue-path.ts";
import { type OrdersListParams, OrdersListQuery } from "../validation/query-input.ts";
import { id } from "../validation/rules.ts";
import { validateInput } from "../validation/validate-input.ts";
import { ScopedResource } from "./scoped-resource.ts";

// Items are checked one by one after the page is read: one malformed order must not hide the good ones.
const OrderPageSchema = pageSchema(z.unknown());

/** An order of a list page that does not match the spec, kept as it came so the caller can record it. */
export interface RejectedOrder {
  /** Position in the page's `data`. */
  index: number;
  /** Its `id`, when it has a string one. */
  id: string | undefined;
  /** What is wrong with it, naming the field. */
  error: string;
  /** The item exactly as received. */
  item: unknown;
}

/** A page of orders: the valid ones in `data`, the others in `rejected`. */
export interface OrderPage extends Page<Order> {
  rejected: RejectedOrder[];
}

function splitPage(page: Page<unknown>): OrderPage {
  const data: Order[] = [];
  const rejected: RejectedOrder[] = [];
  page.data.forEach((item, index) => {
    const parsed = parseOrder(item);
    if (parsed.success) {
      data.push(parsed.data);
      return;
    }
    const field = parsed.path.join(".") || "order";
    const id = typeof (item as { id?: unknown })?.id === "string" ? (item as { id: string }).id : undefined;
    rejected.push({ index, id, error: `${field}: ${parsed.message}`, item });
  });
  return { ...page, data, rejected };
}

/** Orders of one merchant (scope orders:read). */
export class OrdersResource extends ScopedResource {
  /** GET /orders/{order_id}: the order with items, totals and status history. */
  async get(orderId: string, options: CallOptions = {}): Promise<Order> {
    validateInput(id, orderId, "orderId");
    const route = "/orders/{order_id}";
    const order = await this.send({
      method: "GET",
      route,
      path: `/orders/${encodeURIComponent(orderId)}`,
      schema: OrderSchema,
      signal: options.signal,
    });
    const checked = checkStorable(order);
    if (checked.success) return checked.data;
    throw LoopsError.badResponse("GET", route, formatIssuePath(checked.path), checked.message);
  }

  /**
   * GET /orders: one page, newest update first. Dates may be Date objects or ISO strings. Orders that do not
   * match the spec are not thrown: they are returned in `rejected`, with what is wrong, beside the valid ones.
   */
  async list(params: OrdersListParams = {}, options: CallOptions = {}): Promise<OrderPage> {
    const query = validateInput(OrdersListQuery, params);
    const page = await this.send({
      method: "GET",
      route: "/orders",
      path: "/orders",
      query,
      schema: OrderPageSchema,
      signal: options.signal,
    });
    return splitPage(page);
  }

  /** Every page from `params.cursor` (or the first) to the last. */
  pages(
    params: OrdersListParams = {},
    options: CallOptions = {},
  ): AsyncGenerator<OrderPage, void, undefined> {
    validateInput(OrdersListQuery, params);
    return iterateCursorPages(
      "/orders",
      (cursor) => this.list({ ...params, cursor }, options),
      params.cursor,
    );
  }

  /** Every order matching `params`, page after page. */
  iterate(params: OrdersListParams = {}, options: CallOptions = {}): AsyncGenerator<Order, void, undefined> {
    return flattenPages(this.pages(params, options));
  }
}
