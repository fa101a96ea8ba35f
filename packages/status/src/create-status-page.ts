import { randomBytes } from "node:crypto";
import type { Sql } from "@loops-sync/db";
import { Hono } from "hono";
import { type MerchantPage, pageMerchants } from "./page-merchants.ts";
import { readSyncStatus } from "./read-sync-status.ts";
import { readWebhookDelivery } from "./read-webhook-delivery.ts";
import { renderStatusPageHtml } from "./render-status-page-html.ts";

export interface StatusPageOptions {
  /** Pool the page reads sync.*, reporting.sync_health and graphile_worker.jobs through. */
  sql: Sql;
  /** How often the open page polls `/api`, in milliseconds. Default: 2000; at least 250 (else a RangeError). */
  refreshMs?: number;
  /** Called when reading the status fails (the answer is then a 503 without details). Default: ignore. */
  onError?: (error: unknown) => void;
}

/**
 * The operator page as a Hono sub-app: `GET /` is the HTML page, `GET /api` the `SyncStatus` JSON it polls.
 * Mount it where you like (the receiver uses `/status`); the page finds its API relative to its own path.
 * It shows no secret and loads nothing from elsewhere: a CSP with a per-response nonce enforces both.
 */
export function createStatusPage({ sql, refreshMs = 2000, onError = () => {} }: StatusPageOptions): Hono {
  if (!Number.isInteger(refreshMs) || refreshMs < 250) {
    // An option that cannot work is a RangeError, as in the Loops client's options.
    const message = `refreshMs must be an integer of at least 250, got ${refreshMs}`;
    throw Object.assign(new RangeError(message), { code: "invalid_option" });
  }
  const app = new Hono();
  app.get("/", function statusPage(c) {
    const nonce = randomBytes(16).toString("base64");
    c.header(
      "Content-Security-Policy",
      `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    );
    c.header("Cache-Control", "no-store");
    c.header("X-Content-Type-Options", "nosniff");
    return c.html(renderStatusPageHtml({ refreshMs, nonce }));
  });
  app.get("/api", async function statusApi(c) {
    c.header("Cache-Control", "no-store");
    const page = readMerchantPage(c.req.query());
    if (typeof page === "string") {
      return c.json(
        { type: "about:blank", title: "Bad query", status: 400, code: "invalid_query", detail: page },
        400,
        {
          "content-type": "application/problem+json",
        },
      );
    }
    try {
      const [status, webhookDelivery] = await Promise.all([readSyncStatus(sql), readWebhookDelivery(sql)]);
      return c.json(pageMerchants({ ...status, webhookDelivery }, page));
    } catch (error) {
      onError(error);
      return c.json(
        { error: { code: "status_unavailable", message: "cannot read the sync status from Postgres" } },
        503,
      );
    }
  });
  return app;
}

const WHOLE = /^(0|[1-9][0-9]{0,6})$/;

/** `?sort=lag|id&limit=N&offset=N` (all optional), or what is wrong with it. */
function readMerchantPage(query: Record<string, string>): MerchantPage | string {
  const { sort, limit, offset } = query;
  if (sort !== undefined && sort !== "lag" && sort !== "id")
    return `sort: expected "lag" or "id", got "${sort}"`;
  if (limit !== undefined && (!WHOLE.test(limit) || Number(limit) < 1)) {
    return `limit: expected a whole number above 0, got "${limit}"`;
  }
  if (offset !== undefined && !WHOLE.test(offset))
    return `offset: expected a whole number, 0 or more, got "${offset}"`;
  return {
    ...(sort ? { sort } : {}),
    ...(limit ? { limit: Number(limit) } : {}),
    ...(offset ? { offset: Number(offset) } : {}),
  };
}
