import type { CallOptions, IdempotentCallOptions } from "../call-options.ts";
import { flattenPages, iterateCursorPages } from "../paginate.ts";
import { listSchema, type Page, pageSchema } from "../schemas/common.ts";
import {
  type ChannelConnection,
  ChannelConnectionSchema,
  type Location,
  LocationSchema,
} from "../schemas/location.ts";
import {
  LocationCreateInput,
  type LocationCreateParams,
  LocationUpdateInput,
  type LocationUpdateParams,
} from "../validation/location-input.ts";
import { type PageParams, PageQuery } from "../validation/query-input.ts";
import { id } from "../validation/rules.ts";
import { validateInput } from "../validation/validate-input.ts";
import { idempotencyKeyFor } from "./idempotency.ts";
import { ScopedResource } from "./scoped-resource.ts";

const LocationPageSchema = pageSchema(LocationSchema);
const ChannelConnectionListSchema = listSchema(ChannelConnectionSchema);

/** Locations (branches) of one merchant and their channel connections. */
export class LocationsResource extends ScopedResource {
  /** POST /locations (Idempotency-Key). Timezone defaults upstream to Asia/Riyadh. */
  async create(params: LocationCreateParams, options: IdempotentCallOptions = {}): Promise<Location> {
    const json = validateInput(LocationCreateInput, params);
    return this.send({
      method: "POST",
      route: "/locations",
      path: "/locations",
      json,
      idempotencyKey: idempotencyKeyFor(options),
      schema: LocationSchema,
      signal: options.signal,
    });
  }

  /** GET /locations: one page. */
  async list(params: PageParams = {}, options: CallOptions = {}): Promise<Page<Location>> {
    const query = validateInput(PageQuery, params);
    return this.send({
      method: "GET",
      route: "/locations",
      path: "/locations",
      query,
      schema: LocationPageSchema,
      signal: options.signal,
    });
  }

  pages(params: PageParams = {}, options: CallOptions = {}): AsyncGenerator<Page<Location>, void, undefined> {
    validateInput(PageQuery, params);
    return iterateCursorPages(
      "/locations",
      (cursor) => this.list({ ...params, cursor }, options),
      params.cursor,
    );
  }

  iterate(params: PageParams = {}, options: CallOptions = {}): AsyncGenerator<Location, void, undefined> {
    return flattenPages(this.pages(params, options));
  }

  async get(locationId: string, options: CallOptions = {}): Promise<Location> {
    validateInput(id, locationId, "locationId");
    return this.send({
      method: "GET",
      route: "/locations/{location_id}",
      path: `/locations/${encodeURIComponent(locationId)}`,
      schema: LocationSchema,
      signal: options.signal,
    });
  }

  /** PATCH /locations/{id}: send only what changes; opening_hours replaces the whole week. */
  async update(
    locationId: string,
    params: LocationUpdateParams,
    options: CallOptions = {},
  ): Promise<Location> {
    validateInput(id, locationId, "locationId");
    const json = validateInput(LocationUpdateInput, params);
    return this.send({
      method: "PATCH",
      route: "/locations/{location_id}",
      path: `/locations/${encodeURIComponent(locationId)}`,
      json,
      schema: LocationSchema,
      signal: options.signal,
    });
  }

  /** GET /locations/{id}/channel-connections (not paged). */
  async channelConnections(locationId: string, options: CallOptions = {}): Promise<ChannelConnection[]> {
    validateInput(id, locationId, "locationId");
    const body = await this.send({
      method: "GET",
      route: "/locations/{location_id}/channel-connections",
      path: `/locations/${encodeURIComponent(locationId)}/channel-connections`,
      schema: ChannelConnectionListSchema,
      signal: options.signal,
    });
    return body.data;
  }
}
