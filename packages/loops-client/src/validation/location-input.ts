import { z } from "zod";
import { WEEKDAYS } from "../schemas/location.ts";
import { e164Phone, email, externalRef, hhmm, id, localizedName, timezone } from "./rules.ts";

const hoursRange = z.looseObject({ opens: hhmm, closes: hhmm });
const day = z.array(hoursRange, { error: "expected an array of { opens, closes } (empty = closed)" });

/** All seven days are required: the schedule is replaced as a whole on create and on update. */
export const OpeningHoursInput = z.looseObject(
  Object.fromEntries(WEEKDAYS.map((d) => [d, day])) as Record<(typeof WEEKDAYS)[number], typeof day>,
  { error: "expected an object with sunday … saturday" },
);

export const AddressInput = z.looseObject({
  line1: z.string({ error: "expected a street line" }).min(1, "expected a street line"),
  district: z.string().nullish(),
  city: z.string({ error: "expected a city" }).min(1, "expected a city"),
  postal_code: z.string().nullish(),
  country: z
    .string()
    .regex(/^[A-Z]{2}$/, "expected an ISO 3166 alpha-2 country code such as SA")
    .optional(),
  latitude: z.number({ error: "expected a latitude" }).min(-90).max(90),
  longitude: z.number({ error: "expected a longitude" }).min(-180).max(180),
});

export const LocationCreateInput = z.looseObject({
  external_ref: externalRef,
  brand_id: id,
  name: localizedName,
  phone: e164Phone,
  email: email.nullish(),
  address: AddressInput,
  timezone: timezone.optional(),
  opening_hours: OpeningHoursInput,
});
export type LocationCreateParams = z.input<typeof LocationCreateInput>;

export const LocationUpdateInput = z.looseObject({
  external_ref: externalRef.optional(),
  brand_id: z.undefined({ error: "a location cannot move to another brand" }).optional(),
  name: localizedName.optional(),
  phone: e164Phone.optional(),
  email: email.nullish(),
  address: AddressInput.optional(),
  opening_hours: OpeningHoursInput.optional(),
});
export type LocationUpdateParams = z.input<typeof LocationUpdateInput>;
