import { describe, expect, it } from "vitest";
import { LoopsError } from "../errors.ts";
import { BusinessProfileDetailsInput } from "./business-profile-input.ts";
import { LocationCreateInput, LocationUpdateInput } from "./location-input.ts";
import { MenuImportInput, MenuPublishInput } from "./menu-input.ts";
import { BrandCreateInput, MerchantCreateInput } from "./merchant-input.ts";
import { EventsListQuery, OrdersListQuery } from "./query-input.ts";
import { idempotencyKey } from "./rules.ts";
import { validateInput } from "./validate-input.ts";

const name = { en: "Karak", ar: "كرك" };
const sar = (amount: number) => ({ amount, currency: "SAR" });
const closed = { sunday: [], monday: [], tuesday: [], wednesday: [], thursday: [], friday: [], saturday: [] };
const location = {
  external_ref: "loc-1",
  brand_id: "brd_1",
  name,
  phone: "+966500000000",
  email: "branch@example.com",
  address: { line1: "Olaya St", city: "Riyadh", latitude: 24.7, longitude: 46.6 },
  opening_hours: { ...closed, monday: [{ opens: "09:00", closes: "01:30" }] },
};
const group = {
  external_ref: "g",
  name,
  min_selections: 1,
  max_selections: 2,
  options: [{ external_ref: "o", name, price: sar(0) }],
};
const product = {
  external_ref: "p",
  category_external_ref: "c",
  name,
  price: sar(1200),
  modifier_group_external_refs: ["g"],
};
const menu = { categories: [{ external_ref: "c", name }], modifier_groups: [group], products: [product] };
const details = {
  legal_name: "Karak Co",
  cr_number: "1010123456",
  vat_number: "310123456700003",
  national_address: {
    building_number: "1234",
    street: "Olaya St",
    district: "Olaya",
    city: "Riyadh",
    postal_code: "12211",
    additional_number: "5678",
  },
};
const merchant = {
  external_ref: "m:1;a.b_c-d",
  name,
  owner: { name: "Sara", email: "s@example.com", phone: "+966500000001" },
};

function fieldOf(schema: Parameters<typeof validateInput>[0], value: unknown): string {
  try {
    validateInput(schema, value);
  } catch (error) {
    expect(error).toBeInstanceOf(LoopsError);
    expect((error as LoopsError).kind).toBe("invalid");
    expect((error as LoopsError).message.startsWith((error as LoopsError).field)).toBe(true);
    return (error as LoopsError).field;
  }
  throw new Error("expected a LoopsError");
}

describe("valid inputs pass and keep unknown fields", () => {
  it.each([
    ["location", LocationCreateInput, location],
    ["menu", MenuImportInput, menu],
    ["business profile", BusinessProfileDetailsInput, details],
    ["merchant", MerchantCreateInput, merchant],
    [
      "brand",
      BrandCreateInput,
      { external_ref: "b", name, logo_url: "https://cdn.example/logo.png", extra: 1 },
    ],
  ])("%s", (_label, schema, value) => {
    expect(validateInput(schema, value)).toEqual(value);
  });
});

describe("each rule names the field it refuses", () => {
  it.each([
    ["external_ref empty", MerchantCreateInput, { ...merchant, external_ref: "" }, "external_ref"],
    [
      "external_ref 65 chars",
      MerchantCreateInput,
      { ...merchant, external_ref: "a".repeat(65) },
      "external_ref",
    ],
    ["external_ref space", MerchantCreateInput, { ...merchant, external_ref: "a b" }, "external_ref"],
    ["external_ref slash", BrandCreateInput, { external_ref: "a/b", name }, "external_ref"],
    ["name without ar", MerchantCreateInput, { ...merchant, name: { en: "x" } }, "name.ar"],
    ["name empty en", BrandCreateInput, { external_ref: "b", name: { en: "", ar: "x" } }, "name.en"],
    [
      "name 121 chars",
      BrandCreateInput,
      { external_ref: "b", name: { en: "x".repeat(121), ar: "x" } },
      "name.en",
    ],
    [
      "owner phone not E.164",
      MerchantCreateInput,
      { ...merchant, owner: { ...merchant.owner, phone: "0500000000" } },
      "owner.phone",
    ],
    [
      "owner phone leading 0",
      MerchantCreateInput,
      { ...merchant, owner: { ...merchant.owner, phone: "+0500" } },
      "owner.phone",
    ],
    [
      "owner email",
      MerchantCreateInput,
      { ...merchant, owner: { ...merchant.owner, email: "nope" } },
      "owner.email",
    ],
    ["location email", LocationCreateInput, { ...location, email: "a@" }, "email"],
    [
      "logo over http",
      BrandCreateInput,
      { external_ref: "b", name, logo_url: "http://x.example/a.png" },
      "logo_url",
    ],
    [
      "hours 24:00",
      LocationCreateInput,
      { ...location, opening_hours: { ...closed, friday: [{ opens: "24:00", closes: "02:00" }] } },
      "opening_hours.friday[0].opens",
    ],
    [
      "hours 9:00",
      LocationCreateInput,
      { ...location, opening_hours: { ...closed, friday: [{ opens: "08:00", closes: "9:00" }] } },
      "opening_hours.friday[0].closes",
    ],
    [
      "hours missing a day",
      LocationCreateInput,
      { ...location, opening_hours: { ...closed, saturday: undefined } },
      "opening_hours.saturday",
    ],
    ["timezone", LocationCreateInput, { ...location, timezone: "Mars/Olympus" }, "timezone"],
    [
      "latitude",
      LocationCreateInput,
      { ...location, address: { ...location.address, latitude: 91 } },
      "address.latitude",
    ],
    ["moving brands", LocationUpdateInput, { brand_id: "brd_2" }, "brand_id"],
    [
      "fractional price",
      MenuImportInput,
      { ...menu, products: [{ ...product, price: sar(12.5) }] },
      "products[0].price.amount",
    ],
    [
      "menu in USD",
      MenuImportInput,
      { ...menu, products: [{ ...product, price: { amount: 100, currency: "USD" } }] },
      "products[0].price.currency",
    ],
    [
      "negative price",
      MenuImportInput,
      { ...menu, products: [{ ...product, price: sar(-1) }] },
      "products[0].price.amount",
    ],
    [
      "max_selections 0",
      MenuImportInput,
      { ...menu, modifier_groups: [{ ...group, min_selections: 0, max_selections: 0 }] },
      "modifier_groups[0].max_selections",
    ],
    [
      "max < min",
      MenuImportInput,
      { ...menu, modifier_groups: [{ ...group, min_selections: 3, max_selections: 2 }] },
      "modifier_groups[0].max_selections",
    ],
    [
      "no options",
      MenuImportInput,
      { ...menu, modifier_groups: [{ ...group, options: [] }] },
      "modifier_groups[0].options",
    ],
    [
      "option in USD",
      MenuImportInput,
      {
        ...menu,
        modifier_groups: [
          { ...group, options: [{ external_ref: "o", name, price: { amount: 1, currency: "USD" } }] },
        ],
      },
      "modifier_groups[0].options[0].price.currency",
    ],
    [
      "price and variants",
      MenuImportInput,
      { ...menu, products: [{ ...product, variants: [{ external_ref: "v", name, price: sar(1) }] }] },
      "products[0].variants",
    ],
    [
      "neither price nor variants",
      MenuImportInput,
      { ...menu, products: [{ ...product, price: undefined }] },
      "products[0].price",
    ],
    [
      "empty variants",
      MenuImportInput,
      { ...menu, products: [{ ...product, price: undefined, variants: [] }] },
      "products[0].price",
    ],
    [
      "variant in USD",
      MenuImportInput,
      {
        ...menu,
        products: [
          {
            ...product,
            price: undefined,
            variants: [{ external_ref: "v", name, price: { amount: 1, currency: "usd" } }],
          },
        ],
      },
      "products[0].variants[0].price.currency",
    ],
    [
      "unknown category",
      MenuImportInput,
      { ...menu, products: [{ ...product, category_external_ref: "nope" }] },
      "products[0].category_external_ref",
    ],
    [
      "unknown modifier group",
      MenuImportInput,
      { ...menu, products: [{ ...product, modifier_group_external_refs: ["g", "x"] }] },
      "products[0].modifier_group_external_refs[1]",
    ],
    [
      "image over http",
      MenuImportInput,
      { ...menu, products: [{ ...product, image_url: "http://x/a.jpg" }] },
      "products[0].image_url",
    ],
    ["publish to none", MenuPublishInput, { location_ids: [] }, "location_ids"],
    ["cr_number 9 digits", BusinessProfileDetailsInput, { ...details, cr_number: "101012345" }, "cr_number"],
    ["vat not 3…3", BusinessProfileDetailsInput, { ...details, vat_number: "310123456700004" }, "vat_number"],
    [
      "vat 14 digits",
      BusinessProfileDetailsInput,
      { ...details, vat_number: "31012345670003" },
      "vat_number",
    ],
    [
      "building_number",
      BusinessProfileDetailsInput,
      { ...details, national_address: { ...details.national_address, building_number: "12a4" } },
      "national_address.building_number",
    ],
    [
      "postal_code",
      BusinessProfileDetailsInput,
      { ...details, national_address: { ...details.national_address, postal_code: "1221" } },
      "national_address.postal_code",
    ],
    [
      "additional_number",
      BusinessProfileDetailsInput,
      { ...details, national_address: { ...details.national_address, additional_number: undefined } },
      "national_address.additional_number",
    ],
    [
      "street",
      BusinessProfileDetailsInput,
      { ...details, national_address: { ...details.national_address, street: "" } },
      "national_address.street",
    ],
    ["legal_name", BusinessProfileDetailsInput, { ...details, legal_name: "" }, "legal_name"],
    ["limit 0", OrdersListQuery, { limit: 0 }, "limit"],
    ["limit 101", OrdersListQuery, { limit: 101 }, "limit"],
    ["limit 1.5", OrdersListQuery, { limit: 1.5 }, "limit"],
    ["updated_since not a date", OrdersListQuery, { updated_since: "yesterday" }, "updated_since"],
    ["invalid Date", OrdersListQuery, { created_from: new Date("x") }, "created_from"],
    ["unknown filter", OrdersListQuery, { state: "placed" }, ""],
    ["bad event type", EventsListQuery, { types: ["order.*", "Order Created"] }, "types[1]"],
    ["bad event type in a string", EventsListQuery, { types: "order.*,,job.completed" }, "types[1]"],
  ])("%s", (_label, schema, value, field) => {
    expect(fieldOf(schema, value)).toBe(field);
  });

  it("idempotency keys must be UUIDs", () => {
    expect(fieldOf(idempotencyKey, "retry-1")).toBe("");
    expect(() => validateInput(idempotencyKey, "retry-1", "idempotencyKey")).toThrow(
      /^idempotencyKey: expected a UUID$/,
    );
  });
});
