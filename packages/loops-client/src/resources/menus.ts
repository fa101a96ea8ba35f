import type { CallOptions, IdempotentCallOptions } from "../call-options.ts";
import { type Job, JobSchema } from "../schemas/job.ts";
import { type Menu, MenuSchema } from "../schemas/menu.ts";
import {
  checkMenuSize,
  MenuImportInput,
  type MenuImportParams,
  MenuPublishInput,
  type MenuPublishParams,
} from "../validation/menu-input.ts";
import { id } from "../validation/rules.ts";
import { validateInput } from "../validation/validate-input.ts";
import { idempotencyKeyFor } from "./idempotency.ts";
import { ScopedResource } from "./scoped-resource.ts";

/** A brand's menu: import (replace all), read, publish to delivery apps. */
export class MenusResource extends ScopedResource {
  /**
   * PUT /brands/{id}/menu: replaces the whole menu in the background (all or nothing) and answers
   * a menu_import Job; delivery apps see nothing until `publish`.
   */
  async import(brandId: string, menu: MenuImportParams, options: CallOptions = {}): Promise<Job> {
    validateInput(id, brandId, "brandId");
    checkMenuSize(menu);
    const json = validateInput(MenuImportInput, menu);
    return this.send({
      method: "PUT",
      route: "/brands/{brand_id}/menu",
      path: `/brands/${encodeURIComponent(brandId)}/menu`,
      json,
      schema: JobSchema,
      signal: options.signal,
      // Each PUT starts an import job and the API takes no Idempotency-Key here: a timed-out PUT may have
      // started one, so it is not resent (docs/decisions.md, "A timed-out menu import is not resent").
      startsNewWork: true,
    });
  }

  /** GET /brands/{id}/menu: the menu as last imported, with its version. */
  async get(brandId: string, options: CallOptions = {}): Promise<Menu> {
    validateInput(id, brandId, "brandId");
    return this.send({
      method: "GET",
      route: "/brands/{brand_id}/menu",
      path: `/brands/${encodeURIComponent(brandId)}/menu`,
      schema: MenuSchema,
      signal: options.signal,
    });
  }

  /** POST /brands/{id}/menu/publish (Idempotency-Key); omit location_ids to publish everywhere. */
  async publish(
    brandId: string,
    params: MenuPublishParams = {},
    options: IdempotentCallOptions = {},
  ): Promise<Job> {
    validateInput(id, brandId, "brandId");
    const json = validateInput(MenuPublishInput, params);
    return this.send({
      method: "POST",
      route: "/brands/{brand_id}/menu/publish",
      path: `/brands/${encodeURIComponent(brandId)}/menu/publish`,
      json,
      idempotencyKey: idempotencyKeyFor(options),
      schema: JobSchema,
      signal: options.signal,
    });
  }
}
