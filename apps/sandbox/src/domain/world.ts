import type { SandboxClock } from "../clock.ts";
import type { IdFactory } from "../ids.ts";
import { invalidRequest, notFound } from "../problem.ts";
import type { Random } from "../random.ts";
import type { EventLog } from "./event-log.ts";
import { canMove, nextStatus, nextStatusWithMishaps } from "./lifecycle.ts";
import { buildOrder } from "./order-factory.ts";
import type { Connection, Order, OrderStatus, OrderType, Origin, SandboxEvent } from "./resources.ts";
import type { SandboxStore } from "./store.ts";

export interface CreateOrderInput {
  merchantId: string;
  /** Default: a random location of the merchant. */
  locationId?: string;
  /** Default: the location's first active channel connection. */
  channel?: string;
  type?: OrderType;
}

/** Fields of an order a test may change directly; anything else goes through the lifecycle. */
export type OrderPatch = Partial<Pick<Order, "notes" | "scheduled_for" | "payment" | "extensions">>;

export interface SandboxWorldParts {
  store: SandboxStore;
  log: EventLog;
  clock: SandboxClock;
  ids: IdFactory;
  /** Drives order contents and lifecycles (not faults, which have their own seed). */
  random: Random;
}

const CHANNEL_PREFIX: Record<string, string> = {
  hungerstation: "HS",
  jahez: "JZ",
  keeta: "KT",
  careem: "CR",
};

/**
 * The sandbox's business logic: every change goes through here so it bumps `version`, moves `updated_at`
 * forward and appends exactly one event, which listeners (webhook delivery) see synchronously.
 */
export class SandboxWorld {
  readonly #listeners: ((event: SandboxEvent) => void)[] = [];
  #refCounter = 10_000;

  readonly store: SandboxStore;
  readonly log: EventLog;
  readonly clock: SandboxClock;
  readonly ids: IdFactory;
  readonly random: Random;

  constructor({ store, log, clock, ids, random }: SandboxWorldParts) {
    this.store = store;
    this.log = log;
    this.clock = clock;
    this.ids = ids;
    this.random = random;
  }

  onEvent(listener: (event: SandboxEvent) => void): void {
    this.#listeners.push(listener);
  }

  emit(
    type: string,
    merchantId: string,
    locationId: string | null,
    origin: Origin,
    data: Record<string, unknown>,
    /** The connection the event is filed under. Default: the merchant's primary connection. */
    connectionId?: string,
    /** When the change happened (default: now); an order's change names the time its history records. */
    createdAt: string = this.clock.iso(),
  ): SandboxEvent {
    const connection = connectionId
      ? this.store.connections.get(connectionId)
      : this.store.primaryConnection(merchantId);
    const event: SandboxEvent = {
      id: this.ids.next("evt"),
      type,
      created_at: createdAt,
      merchant_id: merchantId,
      location_id: locationId,
      connection_id: connection?.id ?? "con_unknown",
      origin,
      data,
    };
    this.log.append(event);
    for (const listener of this.#listeners) listener(event);
    return event;
  }

  createOrder({ merchantId, locationId, channel, type }: CreateOrderInput, origin: Origin): Order {
    if (!this.store.merchants.has(merchantId)) throw notFound(`merchant ${merchantId}`);
    const locations = this.store.locationsOf(merchantId);
    const location = locationId
      ? this.store.locations.get(locationId)
      : this.random.pick(locations.length ? locations : [undefined]);
    if (!location || location.merchant_id !== merchantId) throw notFound(`location ${locationId ?? "(any)"}`);
    const connections = this.store.channelConnectionsOf(location.id).filter((c) => c.status === "active");
    const channelConnection = channel ? connections.find((c) => c.channel === channel) : connections[0];
    if (!channelConnection) {
      throw invalidRequest([
        {
          field: "channel",
          message: `location ${location.id} has no active connection to channel ${channel ?? "(any)"}`,
        },
      ]);
    }
    const prefix =
      CHANNEL_PREFIX[channelConnection.channel] ?? channelConnection.channel.slice(0, 2).toUpperCase();
    const order = buildOrder({
      id: this.ids.next("ord"),
      location,
      channelConnection,
      channelRef: `${prefix}-${++this.#refCounter}`,
      random: this.random,
      nowIso: this.clock.iso(),
      ...(type ? { type } : {}),
    });
    this.store.orders.set(order.id, order);
    this.store.orderRevision++;
    this.emit("order.created", merchantId, location.id, origin, this.#orderData(order));
    return order;
  }

  /** Moves an order one step (or to `to`), with history and an order.status_changed event. */
  advanceOrder(orderId: string, to: OrderStatus | undefined, origin: Origin, withMishaps = false): Order {
    const order = this.store.orders.get(orderId);
    if (!order) throw notFound(`order ${orderId}`);
    const target = to ?? (withMishaps ? nextStatusWithMishaps(order, this.random) : nextStatus(order));
    if (!target || !canMove(order, target)) {
      throw invalidRequest([
        {
          field: "status",
          message: `order ${orderId} cannot move from ${order.status} to ${target ?? "(none)"}`,
        },
      ]);
    }
    const previous = order.status;
    const at = this.#touch(order);
    order.status = target;
    order.status_history.push({ status: target, at });
    if (target === "delivered" || target === "picked_up") order.payment.paid = true;
    this.emit(
      "order.status_changed",
      order.merchant_id,
      order.location_id,
      origin,
      { ...this.#orderData(order), previous_status: previous },
      undefined,
      at,
    );
    return order;
  }

  updateOrder(orderId: string, patch: OrderPatch, origin: Origin): Order {
    const order = this.store.orders.get(orderId);
    if (!order) throw notFound(`order ${orderId}`);
    Object.assign(order, patch);
    this.#touch(order);
    this.emit("order.updated", order.merchant_id, order.location_id, origin, {
      ...this.#orderData(order),
      changed_fields: Object.keys(patch),
    });
    return order;
  }

  /** Revokes every connection of a merchant; later calls for it answer 403 connection_not_active. */
  revokeMerchant(merchantId: string, origin: Origin = { type: "web_app", application_id: null }): void {
    if (!this.store.merchants.has(merchantId)) throw notFound(`merchant ${merchantId}`);
    for (const c of this.store.connections.values()) {
      if (c.merchant_id !== merchantId || c.status === "revoked") continue;
      c.status = "revoked";
      this.emit(
        "connection.revoked",
        merchantId,
        null,
        origin,
        { connection_id: c.id, application_id: c.application_id, revoked_at: this.clock.iso() },
        c.id,
      );
    }
  }

  /**
   * The merchant connects again: each application whose connection it revoked gets a new connection (a new
   * id, the same grants). No event says so; the merchant's next events name the new connection.
   */
  reconnectMerchant(merchantId: string): Connection[] {
    if (!this.store.merchants.has(merchantId)) throw notFound(`merchant ${merchantId}`);
    const made: Connection[] = [];
    const applications = new Set(
      [...this.store.connections.values()]
        .filter((c) => c.merchant_id === merchantId)
        .map((c) => c.application_id),
    );
    for (const applicationId of applications) {
      const current = this.store.connectionFor(applicationId, merchantId);
      if (!current || current.status === "active") continue;
      const connection: Connection = {
        ...current,
        id: this.ids.next("con"),
        status: "active",
        created_at: this.clock.iso(),
      };
      this.store.connections.set(connection.id, connection);
      made.push(connection);
    }
    return made;
  }

  /** Bumps version and moves updated_at strictly forward, even within one millisecond. */
  #touch(order: Order): string {
    const previous = Date.parse(order.updated_at);
    const at = new Date(Math.max(this.clock.now(), previous + 1)).toISOString();
    order.version += 1;
    order.updated_at = at;
    this.store.orderRevision++;
    return at;
  }

  #orderData(order: Order): Record<string, unknown> {
    return {
      order_id: order.id,
      channel_ref: order.channel_ref,
      status: order.status,
      version: order.version,
    };
  }
}
