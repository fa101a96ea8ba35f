import type { SandboxClock } from "../clock.ts";
import type { IdFactory } from "../ids.ts";
import { checkMenu } from "./menu-check.ts";
import type { Job, Origin } from "./resources.ts";
import type { SandboxStore } from "./store.ts";
import type { SandboxWorld } from "./world.ts";

export interface JobRunnerOptions {
  world: SandboxWorld;
  /** Sandbox ms a job stays pending, then running. Default: 1 000 each. */
  stepMs?: number;
}

/**
 * Menu import and publish as background jobs: pending → running → a final status after `stepMs` sandbox ms
 * each, ending with a `job.completed` event.
 */
export class JobRunner {
  readonly #world: SandboxWorld;
  readonly #stepMs: number;

  constructor({ world, stepMs = 1000 }: JobRunnerOptions) {
    this.#world = world;
    this.#stepMs = stepMs;
  }

  get #store(): SandboxStore {
    return this.#world.store;
  }
  get #clock(): SandboxClock {
    return this.#world.clock;
  }
  get #ids(): IdFactory {
    return this.#world.ids;
  }

  importMenu(merchantId: string, brandId: string, menu: Record<string, unknown>, origin: Origin): Job {
    const job = this.#newJob(merchantId, "menu_import", brandId);
    this.#run(job, origin, () => {
      job.errors = checkMenu(menu);
      if (job.errors.length) return "failed";
      const previous = this.#store.menus.get(brandId);
      this.#store.menus.set(brandId, {
        brand_id: brandId,
        version: (previous?.version ?? 0) + 1,
        updated_at: this.#clock.iso(),
        categories: Array.isArray(menu.categories) ? menu.categories : [],
        modifier_groups: Array.isArray(menu.modifier_groups) ? menu.modifier_groups : [],
        products: Array.isArray(menu.products) ? menu.products : [],
      });
      return "succeeded";
    });
    return job;
  }

  publishMenu(merchantId: string, brandId: string, locationIds: string[], origin: Origin): Job {
    const job = this.#newJob(merchantId, "menu_publish", brandId);
    this.#run(job, origin, () => {
      if (!this.#store.menus.has(brandId)) {
        job.errors = [
          { external_ref: null, field: null, code: "no_menu", message: "import a menu before publishing it" },
        ];
        return "failed";
      }
      for (const locationId of locationIds) {
        for (const cc of this.#store.channelConnectionsOf(locationId)) {
          if (cc.status !== "active") continue;
          const supportsMenus = this.#store.channels.get(cc.channel)?.capabilities.includes("menu") ?? false;
          job.results.push({
            location_id: locationId,
            channel_connection_id: cc.id,
            channel: cc.channel,
            status: supportsMenus ? "succeeded" : "failed",
            errors: supportsMenus
              ? []
              : [
                  {
                    external_ref: null,
                    field: null,
                    code: "menu_not_supported",
                    message: `${cc.channel} does not take menus through this API`,
                  },
                ],
          });
        }
      }
      const failed = job.results.filter((r) => r.status === "failed").length;
      if (failed === 0) return "succeeded";
      return failed === job.results.length ? "failed" : "partially_failed";
    });
    return job;
  }

  #newJob(merchantId: string, type: Job["type"], brandId: string): Job {
    const job: Job = {
      id: this.#ids.next("job"),
      merchant_id: merchantId,
      type,
      brand_id: brandId,
      status: "pending",
      errors: [],
      results: [],
      created_at: this.#clock.iso(),
      completed_at: null,
    };
    this.#store.jobs.set(job.id, job);
    return job;
  }

  #run(job: Job, origin: Origin, work: () => Job["status"]): void {
    this.#clock.after(this.#stepMs, () => {
      job.status = "running";
      this.#clock.after(this.#stepMs, () => {
        job.status = work();
        job.completed_at = this.#clock.iso();
        this.#world.emit("job.completed", job.merchant_id, null, origin, {
          job_id: job.id,
          type: job.type,
          brand_id: job.brand_id,
          status: job.status,
        });
      });
    });
  }
}
