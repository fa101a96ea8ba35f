// The spec's "5 MB of JSON" (menu import) and "4 MB" (document upload) read the safe way, as 5,000,000 and
// 4,000,000 bytes, by the client's pre-checks and by the sandbox alike; and a PUT /brands/{id}/menu that
// timed out is not sent again (each PUT starts an import job).

import { LoopsClient, LoopsError } from "@loops-sync/loops-client";
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, startLoopsTestServer } from "../support/loops-test-server.ts";
import { importedMenu } from "../support/menu-fixtures.ts";
import { apiAs, getToken } from "../support/sandbox-api.ts";
import { sandboxClient } from "../support/sandbox-client.ts";

/** A valid menu padded to exactly `bytes` bytes of JSON. */
function menuOf(bytes: number) {
  const menu = { ...importedMenu("pad"), pad: "" };
  menu.pad = "x".repeat(bytes - Buffer.byteLength(JSON.stringify(menu)));
  expect(Buffer.byteLength(JSON.stringify(menu))).toBe(bytes);
  return menu;
}

describe("5 MB and 4 MB are 5,000,000 and 4,000,000 bytes", () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, jobStepMs: 5 });
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it("the client refuses a menu of 5,000,001 bytes (under 5 MiB) before sending it, and sends one of 5,000,000", async () => {
    const client = sandboxClient(sandbox);
    const menus = client.forMerchant("mer_demo_1").menus;
    const refused = await menus.import("brd_demo_1", menuOf(5_000_001)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(LoopsError);
    expect((refused as LoopsError).message).toMatch(/5000001 bytes of JSON; the limit is 5 MB \(5000000\)/);
    expect(client.stats.requests).toBe(0);
  });

  it("the sandbox refuses a menu body over 5,000,000 bytes with 400 naming the body", async () => {
    const api = apiAs(sandbox, await getToken(sandbox));
    // Over 5,000,000 but well under 5 MiB (5,242,880), and under the sandbox's transport cut-off.
    const tooBig = await api("/brands/brd_demo_1/menu", { method: "PUT", body: menuOf(5_030_000) });
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.errors?.[0]?.field).toBe("body");
    const fits = await api("/brands/brd_demo_1/menu", { method: "PUT", body: menuOf(4_990_000) });
    expect(fits.status).toBe(202);
  });

  it("the client refuses a document of 4,000,001 bytes, and the sandbox one over 4,000,000", async () => {
    const pdf = (bytes: number) => {
      const file = new Uint8Array(bytes);
      file.set([0x25, 0x50, 0x44, 0x46]);
      return file;
    };
    const client = sandboxClient(sandbox);
    const refused = await client
      .forMerchant("mer_demo_1")
      .businessProfile.uploadDocument({ type: "owner_id", file: pdf(4_000_001) })
      .catch((e: unknown) => e);
    expect((refused as LoopsError).message).toMatch(/4000001 bytes; the limit is 4 MB \(4000000\)/);
    expect(client.stats.requests).toBe(0);

    const token = await getToken(sandbox);
    // A new merchant: its business profile is a draft, so documents may be uploaded.
    const made = await apiAs(
      sandbox,
      token,
      null,
    )<{ id: string }>("/merchants", {
      method: "POST",
      body: {
        external_ref: "limits-1",
        name: { en: "Limits", ar: "حدود" },
        owner: { name: "Owner", email: "owner@example.com", phone: "+966500000001" },
      },
    });
    expect(made.status).toBeLessThan(300);
    const fits = new FormData();
    fits.set("type", "owner_id");
    fits.set("file", new File([pdf(3_990_000)], "owner.pdf", { type: "application/pdf" }));
    const accepted = await fetch(`${sandbox.apiUrl}/merchant/business-profile/documents`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "service-merchant-id": made.body.id },
      body: fits,
    });
    expect(accepted.status).toBeLessThan(300);
    const form = new FormData();
    form.set("type", "owner_id");
    form.set("file", new File([pdf(4_050_000)], "owner.pdf", { type: "application/pdf" }));
    const response = await fetch(`${sandbox.apiUrl}/merchant/business-profile/documents`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "service-merchant-id": made.body.id },
      body: form,
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { code: string }).code).toBe("invalid_file");
  });
});

describe("a timed-out menu import", () => {
  it("is not sent again: each PUT starts an import job", async () => {
    const server = await startLoopsTestServer();
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    server.on("PUT", "/brands/brd_1/menu", async (_q, res) => {
      await held;
      json(res, 202, {
        id: "job_1",
        type: "menu_import",
        status: "pending",
        created_at: "2026-11-22T05:00:00Z",
      });
    });
    try {
      const client = new LoopsClient({
        apiUrl: server.apiUrl,
        authUrl: server.authUrl,
        clientId: server.clientId,
        clientSecret: server.clientSecret,
        timeoutMs: 500,
        retry: { maxAttempts: 4, baseDelayMs: 1, maxDelayMs: 5 },
      });
      const error = await client
        .forMerchant("mer_1")
        .menus.import("brd_1", importedMenu("t"))
        .catch((e: unknown) => e);
      expect((error as LoopsError).kind).toBe("timeout");
      expect(server.requests.filter((r) => r.method === "PUT")).toHaveLength(1);
    } finally {
      release();
      await server.close();
    }
  });
});
