import { randomUUID } from "node:crypto";
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "#testkit/wait-for";
import { type ApiCaller, apiAs, getToken } from "../support/sandbox-api.ts";

const WEEK = Object.fromEntries(
  ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"].map((d) => [
    d,
    [{ opens: "09:00", closes: "23:30" }],
  ]),
);
const ADDRESS = { line1: "King Fahd Rd 1", city: "Riyadh", latitude: 24.7, longitude: 46.7 };

describe("sandbox write endpoints", () => {
  let sandbox: Sandbox;
  let api: ApiCaller;
  let token: string;

  beforeAll(async () => {
    sandbox = await startSandbox({ jobStepMs: 5, reviewDelayMs: 5 });
    token = await getToken(sandbox);
    api = apiAs(sandbox, token);
  });
  afterAll(() => sandbox.close());

  it("creates a merchant, refuses a reused external_ref with existing_id, and forbids Service-Merchant-Id", async () => {
    const body = {
      external_ref: "partner-m-1",
      name: { en: "Dar Al Shai", ar: "دار الشاي" },
      owner: { name: "Sara", email: "sara@example.com", phone: "+966501234567" },
    };
    const noHeader = apiAs(sandbox, token, null);
    const made = await noHeader<{ id: string; business_profile_status: string }>("/merchants", {
      method: "POST",
      body,
    });
    expect(made.status).toBe(201);
    expect(made.body.business_profile_status).toBe("draft");
    const again = await noHeader("/merchants", {
      method: "POST",
      body: { ...body, owner: { ...body.owner, email: "other@example.com" } },
    });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: "external_ref_conflict", existing_id: made.body.id });
    const withHeader = await api("/merchants", { method: "POST", body: { ...body, external_ref: "x2" } });
    expect(withHeader.status).toBe(400);
    const invalid = await noHeader("/merchants", {
      method: "POST",
      body: { external_ref: "bad ref!", name: { en: "" }, owner: { email: "no" } },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.errors?.map((e) => e.field)).toEqual(
      expect.arrayContaining(["external_ref", "name.en", "name.ar", "owner.email", "owner.phone"]),
    );
  });

  it("replays the original response for a repeated Idempotency-Key and refuses it for another body", async () => {
    const key = randomUUID();
    const body = { external_ref: "brand-idem", name: { en: "Idem", ar: "ايدم" } };
    const first = await api<{ id: string }>("/brands", {
      method: "POST",
      body,
      headers: { "idempotency-key": key },
    });
    const second = await api<{ id: string }>("/brands", {
      method: "POST",
      body,
      headers: { "idempotency-key": key },
    });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body.id).toBe(first.body.id);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    const reused = await api("/brands", {
      method: "POST",
      body: { ...body, external_ref: "other" },
      headers: { "idempotency-key": key },
    });
    expect(reused.status).toBe(422);
    expect(reused.body.code).toBe("idempotency_key_reused");
    expect(
      (await api("/brands", { method: "POST", body, headers: { "idempotency-key": "not-a-uuid" } })).status,
    ).toBe(400);
    // After 24 hours the key is forgotten: the same request is a new request (and now conflicts).
    sandbox.clock.advance(24 * 3600_000 + 1000);
    token = await getToken(sandbox);
    api = apiAs(sandbox, token);
    const late = await api("/brands", { method: "POST", body, headers: { "idempotency-key": key } });
    expect(late.status).toBe(409);
    expect(late.body.existing_id).toBe(first.body.id);
  });

  it("creates and updates a location with the create shape, validating every field", async () => {
    const bad = await api("/locations", {
      method: "POST",
      body: {
        external_ref: "loc-1",
        brand_id: "brd_demo_1",
        name: { en: "A", ar: "ب" },
        phone: "0500",
        address: {},
        opening_hours: { sunday: [{ opens: "25:00", closes: "10:00" }] },
      },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors?.map((e) => e.field)).toEqual(
      expect.arrayContaining([
        "phone",
        "address.line1",
        "opening_hours.sunday.0.opens",
        "opening_hours.monday",
      ]),
    );
    const made = await api<{ id: string; timezone: string; address: { country: string } }>("/locations", {
      method: "POST",
      body: {
        external_ref: "loc-1",
        brand_id: "brd_demo_1",
        name: { en: "Nakheel", ar: "النخيل" },
        phone: "+966112223344",
        address: ADDRESS,
        opening_hours: WEEK,
      },
    });
    expect(made.status).toBe(201);
    expect(made.body.timezone).toBe("Asia/Riyadh");
    expect(made.body.address.country).toBe("SA");
    expect((await api(`/locations/${made.body.id}/channel-connections`)).body).toEqual({ data: [] });
    const moved = await api(`/locations/${made.body.id}`, {
      method: "PATCH",
      body: { brand_id: "brd_other" },
    });
    expect(moved.body.errors?.[0]?.field).toBe("brand_id");
    const renamed = await api<{ name: { en: string } }>(`/locations/${made.body.id}`, {
      method: "PATCH",
      body: { name: { en: "Nakheel 2", ar: "النخيل ٢" } },
    });
    expect(renamed.body.name.en).toBe("Nakheel 2");
    // Paging one by one visits seeded and created locations alike, each once.
    const visited: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { data: { id: string }[]; next_cursor: string | null } } = await api(
        `/locations?limit=1${cursor ? `&cursor=${cursor}` : ""}`,
      );
      visited.push(...page.body.data.map((l) => l.id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(visited.sort()).toEqual(["loc_demo_1a", "loc_demo_1b", made.body.id].sort());
  });

  it("imports a menu as a background job ending in job.completed, all or nothing", async () => {
    const menu = {
      categories: [{ external_ref: "cat-1", name: { en: "Grills", ar: "مشويات" } }],
      modifier_groups: [
        {
          external_ref: "mg-1",
          name: { en: "Sauce", ar: "صوص" },
          min_selections: 0,
          max_selections: 2,
          options: [
            {
              external_ref: "opt-1",
              name: { en: "Garlic", ar: "ثوم" },
              price: { amount: 200, currency: "SAR" },
            },
          ],
        },
      ],
      products: [
        {
          external_ref: "p-1",
          category_external_ref: "cat-1",
          name: { en: "Kebab", ar: "كباب" },
          price: { amount: 3500, currency: "SAR" },
          modifier_group_external_refs: ["mg-1"],
        },
      ],
    };
    const job = await api<{ id: string; status: string; type: string }>("/brands/brd_demo_1/menu", {
      method: "PUT",
      body: menu,
    });
    expect(job.status).toBe(202);
    expect(job.body).toMatchObject({ type: "menu_import", status: "pending" });
    await waitFor(
      async () => (await api<{ status: string }>(`/jobs/${job.body.id}`)).body.status === "succeeded",
    );
    const stored = await api<{ version: number; brand_id: string }>("/brands/brd_demo_1/menu");
    // The seed gave every brand a first menu (version 1).
    expect(stored.body).toMatchObject({ version: 2, brand_id: "brd_demo_1" });
    const completed = sandbox.truth
      .events("mer_demo_1")
      .find((e) => e.type === "job.completed" && e.data.job_id === job.body.id);
    expect(completed?.data).toMatchObject({ status: "succeeded", type: "menu_import" });

    const broken = {
      ...menu,
      products: [
        {
          ...menu.products[0],
          category_external_ref: "nope",
          variants: [{}],
          price: { amount: 1, currency: "USD" },
        },
      ],
    };
    const failing = await api<{ id: string }>("/brands/brd_demo_1/menu", { method: "PUT", body: broken });
    await waitFor(
      async () => (await api<{ status: string }>(`/jobs/${failing.body.id}`)).body.status === "failed",
    );
    const failed = await api<{ errors: { code: string }[] }>(`/jobs/${failing.body.id}`);
    expect(failed.body.errors.map((e) => e.code)).toEqual(
      expect.arrayContaining(["unknown_category", "price_or_variants", "invalid_currency"]),
    );
    expect((await api<{ version: number }>("/brands/brd_demo_1/menu")).body.version).toBe(2);

    const tooBig = await api("/brands/brd_demo_1/menu", {
      method: "PUT",
      body: { ...menu, pad: "x".repeat(5 * 1024 * 1024 + 70_000) },
    });
    expect(tooBig.status).toBe(400);
    expect(tooBig.body.errors?.[0]?.field).toBe("body");

    const publish = await api<{ id: string }>("/brands/brd_demo_1/menu/publish", {
      method: "POST",
      body: {},
    });
    expect(publish.status).toBe(202);
    await waitFor(
      async () =>
        (await api<{ completed_at: string | null }>(`/jobs/${publish.body.id}`)).body.completed_at !== null,
    );
    const published = await api<{ status: string; results: { status: string }[] }>(
      `/jobs/${publish.body.id}`,
    );
    expect(published.body.status).toBe("succeeded");
    expect(published.body.results.length).toBeGreaterThan(0);
  });

  it("walks a business profile through submit and review, locking edits meanwhile", async () => {
    const noHeader = apiAs(sandbox, token, null);
    const m = await noHeader<{ id: string }>("/merchants", {
      method: "POST",
      body: {
        external_ref: "bp-1",
        name: { en: "Bp", ar: "بب" },
        owner: { name: "O", email: "bp@example.com", phone: "+966500000001" },
      },
    });
    const as = apiAs(sandbox, token, m.body.id);
    const missing = await as("/merchant/business-profile/submit", { method: "POST" });
    expect(missing.status).toBe(400);
    expect(missing.body.errors?.map((e) => e.field)).toContain("details");
    const details = {
      legal_name: "Bp Trading Co",
      cr_number: "1010123456",
      vat_number: "300000000000003",
      national_address: {
        building_number: "1234",
        street: "Olaya",
        district: "Olaya",
        city: "Riyadh",
        postal_code: "12345",
        additional_number: "6789",
      },
    };
    expect(
      (await as("/merchant/business-profile", { method: "PUT", body: { ...details, vat_number: "123" } }))
        .body.errors?.[0]?.field,
    ).toBe("vat_number");
    expect((await as("/merchant/business-profile", { method: "PUT", body: details })).status).toBe(200);
    for (const type of ["commercial_registration", "vat_certificate", "national_address_certificate"]) {
      const form = new FormData();
      form.set("type", type);
      form.set(
        "file",
        new File([Buffer.from("%PDF-1.4 sandbox")], `${type}.pdf`, { type: "application/pdf" }),
      );
      const r = await fetch(`${sandbox.apiUrl}/merchant/business-profile/documents`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "service-merchant-id": m.body.id },
        body: form,
      });
      expect(r.status).toBe(201);
    }
    const badFile = new FormData();
    badFile.set("type", "owner_id");
    badFile.set("file", new File(["x"], "x.txt", { type: "text/plain" }));
    const refused = await fetch(`${sandbox.apiUrl}/merchant/business-profile/documents`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "service-merchant-id": m.body.id },
      body: badFile,
    });
    expect(((await refused.json()) as { code: string }).code).toBe("invalid_file");
    const submitted = await as<{ status: string }>("/merchant/business-profile/submit", { method: "POST" });
    expect(submitted.body.status).toBe("in_review");
    expect((await as("/merchant/business-profile", { method: "PUT", body: details })).body.code).toBe(
      "business_profile_locked",
    );
    await waitFor(
      async () =>
        (await as<{ business_profile_status: string }>("/merchant")).body.business_profile_status ===
        "approved",
    );
    expect(sandbox.truth.events(m.body.id).map((e) => e.type)).toContain("business_profile.approved");

    // A legal name containing "reject" asks the review for a rejection; the profile can then be fixed.
    const m2 = await noHeader<{ id: string }>("/merchants", {
      method: "POST",
      body: {
        external_ref: "bp-2",
        name: { en: "Bp2", ar: "بب٢" },
        owner: { name: "O", email: "bp2@example.com", phone: "+966500000002" },
      },
    });
    const as2 = apiAs(sandbox, token, m2.body.id);
    await as2("/merchant/business-profile", {
      method: "PUT",
      body: { ...details, legal_name: "Please Reject Co" },
    });
    for (const type of ["commercial_registration", "vat_certificate", "national_address_certificate"]) {
      const form = new FormData();
      form.set("type", type);
      form.set(
        "file",
        new File([Buffer.from([0x89, 0x50, 0x4e, 0x47])], `${type}.png`, { type: "image/png" }),
      );
      await fetch(`${sandbox.apiUrl}/merchant/business-profile/documents`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "service-merchant-id": m2.body.id },
        body: form,
      });
    }
    expect(
      (await as2<{ status: string }>("/merchant/business-profile/submit", { method: "POST" })).body.status,
    ).toBe("in_review");
    await waitFor(
      async () =>
        (await as2<{ business_profile_status: string }>("/merchant")).body.business_profile_status ===
        "rejected",
    );
    const rejected = sandbox.truth.events(m2.body.id).find((e) => e.type === "business_profile.rejected");
    expect(rejected?.data.notes).toEqual(expect.any(String));
    const fixed = await as2<{ status: string }>("/merchant/business-profile", {
      method: "PUT",
      body: details,
    });
    expect(fixed.status).toBe(200);
    expect(fixed.body.status).toBe("rejected");
  });
});
