import type { CallOptions, IdempotentCallOptions } from "../call-options.ts";
import { flattenPages, iterateCursorPages } from "../paginate.ts";
import { type Page, pageSchema } from "../schemas/common.ts";
import { type Brand, BrandSchema } from "../schemas/merchant.ts";
import {
  BrandCreateInput,
  type BrandCreateParams,
  BrandUpdateInput,
  type BrandUpdateParams,
} from "../validation/merchant-input.ts";
import { type PageParams, PageQuery } from "../validation/query-input.ts";
import { id } from "../validation/rules.ts";
import { validateInput } from "../validation/validate-input.ts";
import { idempotencyKeyFor } from "./idempotency.ts";
import { ScopedResource } from "./scoped-resource.ts";

const BrandPageSchema = pageSchema(BrandSchema);

/** Brands of one merchant. Image URLs must be public HTTPS; Loops stores its own copies. */
export class BrandsResource extends ScopedResource {
  /** POST /brands (Idempotency-Key). */
  async create(params: BrandCreateParams, options: IdempotentCallOptions = {}): Promise<Brand> {
    const json = validateInput(BrandCreateInput, params);
    return this.send({
      method: "POST",
      route: "/brands",
      path: "/brands",
      json,
      idempotencyKey: idempotencyKeyFor(options),
      schema: BrandSchema,
      signal: options.signal,
    });
  }

  async list(params: PageParams = {}, options: CallOptions = {}): Promise<Page<Brand>> {
    const query = validateInput(PageQuery, params);
    return this.send({
      method: "GET",
      route: "/brands",
      path: "/brands",
      query,
      schema: BrandPageSchema,
      signal: options.signal,
    });
  }

  pages(params: PageParams = {}, options: CallOptions = {}): AsyncGenerator<Page<Brand>, void, undefined> {
    validateInput(PageQuery, params);
    return iterateCursorPages(
      "/brands",
      (cursor) => this.list({ ...params, cursor }, options),
      params.cursor,
    );
  }

  iterate(params: PageParams = {}, options: CallOptions = {}): AsyncGenerator<Brand, void, undefined> {
    return flattenPages(this.pages(params, options));
  }

  async get(brandId: string, options: CallOptions = {}): Promise<Brand> {
    validateInput(id, brandId, "brandId");
    return this.send({
      method: "GET",
      route: "/brands/{brand_id}",
      path: `/brands/${encodeURIComponent(brandId)}`,
      schema: BrandSchema,
      signal: options.signal,
    });
  }

  /** PATCH /brands/{id}: only the fields to change. */
  async update(brandId: string, params: BrandUpdateParams, options: CallOptions = {}): Promise<Brand> {
    validateInput(id, brandId, "brandId");
    const json = validateInput(BrandUpdateInput, params);
    return this.send({
      method: "PATCH",
      route: "/brands/{brand_id}",
      path: `/brands/${encodeURIComponent(brandId)}`,
      json,
      schema: BrandSchema,
      signal: options.signal,
    });
  }
}
