import { randomBytes } from "node:crypto";
import type { Sql } from "@loops-sync/db";
import { createGatewayClient, type LoopsClient, type OpeningHours } from "@loops-sync/loops-client";
import { createGatewayApp, type ReceiverEnv } from "@loops-sync/receiver";
import { createWriteMirror } from "@loops-sync/worker";
import type { Hono } from "hono";
import type { Registry } from "prom-client";

/** `demo --gateway`: a gateway with a token of its own, for the admin listener. */
export function createDemoGateway(client: LoopsClient, sql: Sql, registry: Registry) {
  const token = randomBytes(24).toString("hex");
  const app: Hono<ReceiverEnv> = createGatewayApp({
    token,
    send: (request) => client.forward(request),
    mirror: createWriteMirror({ sql }),
    registry,
  });
  return { app, token };
}

const DAYS = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"] as const;

/**
 * A backend's location edit through the gateway (the typed client, GATEWAY_TOKEN), then the read it makes
 * right after: replica.locations already holds the new hours. Prints both.
 */
export async function showGatewayWrite(
  client: LoopsClient,
  sql: Sql,
  { adminUrl, token, merchantId }: { adminUrl: string; token: string; merchantId: string },
): Promise<void> {
  const [location] = (await client.forMerchant(merchantId).locations.list({ limit: 1 })).data;
  if (!location) return;
  const opens = `0${6 + Math.floor(Math.random() * 4)}:${["00", "15", "30", "45"][Math.floor(Math.random() * 4)]}`;
  const week = Object.fromEntries(DAYS.map((d) => [d, [{ opens, closes: "23:00" }]])) as OpeningHours;
  const backend = createGatewayClient({ url: adminUrl, token });
  const started = performance.now();
  await backend.forMerchant(merchantId).locations.update(location.id, { opening_hours: week });
  const ms = performance.now() - started;
  const [row] = await sql<{ opens: string | null }[]>`
    select raw #>> '{opening_hours,sunday,0,opens}' as opens from replica.locations where id = ${location.id}`;
  console.log(
    `gateway: PATCH /locations/${location.id} opening at ${opens} through ${adminUrl}/loops/v1 (${ms.toFixed(0)} ms); ` +
      `read back at once from replica.locations: opens ${row?.opens ?? "(no row)"}`,
  );
}
