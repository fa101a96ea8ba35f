import { randomUUID } from "node:crypto";
import { LoopsClient, LoopsError, type MenuImportParams } from "@loops-sync/loops-client";
import { type Sandbox, startSandbox } from "@loops-sync/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let sandbox: Sandbox;
let client: LoopsClient;
const warnings: string[] = [];
const name = { en: "Dates & Co", ar: "تمور وشركاه" };
const week = {
  sunday: [{ opens: "09:00", closes: "23:00" }],
  monday: [{ opens: "09:00", closes: "23:00" }],
  tuesday: [{ opens: "09:00", closes: "23:00" }],
  wednesday: [{ opens: "09:00", closes: "23:00" }],
  thursday: [{ opens: "09:00", closes: "01:00" }],
  friday: [{ opens: "14:00", closes: "01:00" }],
  saturday: [],
};
const menu: MenuImportParams = {
  categories: [{ external_ref: "cat-dates", name: { en: "Dates", ar: "تمور" } }],
  modifier_groups: [
    {
      external_ref: "mg-box",
      name: { en: "Box", ar: "علبة" },
      min_selections: 1,
      max_selections: 1,
      options: [
        {
          external_ref: "box-small",
          name: { en: "Small", ar: "صغيرة" },
          price: { amount: 0, currency: "SAR" },
        },
        {
          external_ref: "box-large",
          name: { en: "Large", ar: "كبيرة" },
          price: { amount: 1500, currency: "SAR" },
        },
      ],
    },
  ],
  products: [
    {
      external_ref: "p-sukkari",
      category_external_ref: "cat-dates",
      name: { en: "Sukkari", ar: "سكري" },
      price: { amount: 4500, currency: "SAR" },
      modifier_group_external_refs: ["mg-box"],
      calories: 280,
    },
    {
      external_ref: "p-ajwa",
      category_external_ref: "cat-dates",
      name: { en: "Ajwa", ar: "عجوة" },
      variants: [
        {
          external_ref: "ajwa-500",
          name: { en: "500 g", ar: "٥٠٠ غ" },
          price: { amount: 6000, currency: "SAR" },
        },
        {
          external_ref: "ajwa-1k",
          name: { en: "1 kg", ar: "١ كغ" },
          price: { amount: 11000, currency: "SAR" },
        },
      ],
    },
  ],
};

beforeAll(async () => {
  sandbox = await startSandbox();
  client = new LoopsClient({
    apiUrl: sandbox.apiUrl,
    authUrl: sandbox.authUrl,
    clientId: sandbox.credentials.clientId,
    clientSecret: sandbox.credentials.clientSecret,
    logger: { warn: (obj) => warnings.push(JSON.stringify(obj)) },
  });
});
afterAll(() => sandbox.close());

describe("partner management flows against the sandbox", () => {
  it("creates a merchant, a brand, a location and a menu, and reads each back", async () => {
    const merchant = await client.merchants.create({
      external_ref: `m-${randomUUID().slice(0, 8)}`,
      name,
      owner: { name: "Noura", email: "noura@example.com", phone: "+966511111111" },
    });
    expect(merchant.id).toMatch(/^mer_/);
    const m = client.forMerchant(merchant.id);
    expect((await m.merchant.get()).id).toBe(merchant.id);
    expect((await m.merchant.update({ name: { en: "Dates and Co", ar: "تمور" } })).name.en).toBe(
      "Dates and Co",
    );
    expect((await m.connection.get()).merchant_id).toBe(merchant.id);

    const brand = await m.brands.create({ external_ref: "brand-1", name });
    expect((await m.brands.get(brand.id)).id).toBe(brand.id);
    expect(
      (await m.brands.update(brand.id, { description: { en: "Fine dates", ar: "تمور فاخرة" } })).id,
    ).toBe(brand.id);
    const brands: string[] = [];
    for await (const b of m.brands.iterate({ limit: 1 })) brands.push(b.id);
    expect(brands).toContain(brand.id);

    const location = await m.locations.create({
      external_ref: "loc-olaya",
      brand_id: brand.id,
      name: { en: "Olaya", ar: "العليا" },
      phone: "+966512345678",
      email: null,
      address: { line1: "Olaya St 1", city: "Riyadh", latitude: 24.69, longitude: 46.68 },
      opening_hours: week,
    });
    expect((await m.locations.get(location.id)).id).toBe(location.id);
    expect((await m.locations.update(location.id, { phone: "+966512345679" })).id).toBe(location.id);
    expect(Array.isArray(await m.locations.channelConnections(location.id))).toBe(true);
    const locations = (await m.locations.list()).data.map((l) => l.id);
    expect(locations).toContain(location.id);

    const importJob = await m.menus.import(brand.id, menu);
    expect(importJob.type).toBe("menu_import");
    expect((await m.jobs.get(importJob.id)).id).toBe(importJob.id);
    const publishJob = await m.menus.publish(brand.id);
    expect(publishJob.type).toBe("menu_publish");
    expect(warnings).toEqual([]);
  });

  it("replays a brand creation with the same Idempotency-Key instead of creating twice", async () => {
    const m = client.forMerchant(sandbox.merchantIds[0]!);
    const key = randomUUID();
    const first = await m.brands.create({ external_ref: "brand-replay", name }, { idempotencyKey: key });
    const again = await m.brands.create({ external_ref: "brand-replay", name }, { idempotencyKey: key });
    expect(again.id).toBe(first.id);
    const conflict = await m.brands.create({ external_ref: "brand-replay", name }).catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(LoopsError);
    expect(conflict).toMatchObject({ status: 409, code: "external_ref_conflict", existingId: first.id });
  });

  it("fills in, documents and submits a new merchant's business profile", async () => {
    const merchant = await client.merchants.create({
      external_ref: `m-${randomUUID().slice(0, 8)}`,
      name,
      owner: { name: "Faisal", email: "faisal@example.com", phone: "+966522222222" },
    });
    expect(merchant.business_profile_status).toBe("draft");
    const m = client.forMerchant(merchant.id);
    const details = {
      legal_name: "Dates and Co LLC",
      cr_number: "1010654321",
      vat_number: "300000000000003",
      national_address: {
        building_number: "4321",
        street: "Tahlia St",
        district: "Sulaimaniyah",
        city: "Riyadh",
        postal_code: "12245",
        additional_number: "8765",
      },
    };
    const profile = await m.businessProfile.put(details);
    expect(profile.status).toBe("draft");
    expect(profile.required_documents.length).toBeGreaterThan(0);
    for (const type of profile.required_documents) {
      const doc = await m.businessProfile.uploadDocument({
        type: type as "commercial_registration",
        file: Buffer.from("%PDF-1.7\n% test document\n"),
        fileName: `${type}.pdf`,
      });
      expect(doc.type).toBe(type);
    }
    const submitted = await m.businessProfile.submit();
    expect(submitted.status).toBe("in_review");
    const locked = await m.businessProfile
      .put({ ...details, legal_name: "Changed" })
      .catch((e: unknown) => e);
    expect(locked).toMatchObject({ status: 409, code: "business_profile_locked" });
  });
});
