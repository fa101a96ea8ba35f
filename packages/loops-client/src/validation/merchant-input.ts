import { z } from "zod";
import { e164Phone, email, externalRef, httpsUrl, localizedName, localizedText } from "./rules.ts";

export const MerchantCreateInput = z.looseObject({
  external_ref: externalRef,
  name: localizedName,
  owner: z.looseObject(
    {
      name: z.string({ error: "expected the owner's name" }).min(1, "expected the owner's name"),
      email,
      phone: e164Phone,
    },
    { error: "expected { name, email, phone }" },
  ),
});
export type MerchantCreateParams = z.input<typeof MerchantCreateInput>;

export const MerchantUpdateInput = z.looseObject({
  external_ref: externalRef.optional(),
  name: localizedName.optional(),
});
export type MerchantUpdateParams = z.input<typeof MerchantUpdateInput>;

export const BrandCreateInput = z.looseObject({
  external_ref: externalRef,
  name: localizedName,
  description: localizedText.optional(),
  logo_url: httpsUrl.nullish(),
  cover_image_url: httpsUrl.nullish(),
});
export type BrandCreateParams = z.input<typeof BrandCreateInput>;

export const BrandUpdateInput = z.looseObject({
  external_ref: externalRef.optional(),
  name: localizedName.optional(),
  description: localizedText.optional(),
  logo_url: httpsUrl.nullish(),
  cover_image_url: httpsUrl.nullish(),
});
export type BrandUpdateParams = z.input<typeof BrandUpdateInput>;
