import { z } from "zod";

/** The field rules the spec states, each with a message that says what is expected. */

export const externalRef = z
  .string({ error: "expected a string of 1-64 characters" })
  .regex(/^[A-Za-z0-9\-_.:;]{1,64}$/, "expected 1-64 characters: letters, digits, - _ . : ;");

const nameText = z
  .string({ error: "expected a string of 1-120 characters" })
  .min(1, "expected 1-120 characters, got an empty string")
  .max(120, "expected at most 120 characters");

/** Localized text where both languages are required (names). */
export const localizedName = z.looseObject({ en: nameText, ar: nameText }, { error: "expected { en, ar }" });

/** Optional descriptive text: either side may be left out. */
export const localizedText = z.looseObject({ en: z.string().nullish(), ar: z.string().nullish() });

const amount = z
  .number({ error: "expected an integer amount in minor units" })
  .int("expected an integer amount in minor units (halalas for SAR), not a fraction");

/** Money anywhere: integer minor units and an ISO 4217 code. */
export const money = z.looseObject({
  amount,
  currency: z
    .string({ error: "expected an ISO 4217 currency code" })
    .regex(/^[A-Z]{3}$/, "expected an ISO 4217 code such as SAR"),
});

/** Money in menus: a price customers see, SAR only. */
export const menuMoney = z.looseObject({
  amount: amount.nonnegative("expected a price of 0 or more"),
  currency: z.literal("SAR", { error: "expected SAR (the only currency menus accept)" }),
});

export const e164Phone = z
  .string({ error: "expected an E.164 phone number such as +966500000000" })
  .regex(/^\+[1-9][0-9]{1,14}$/, "expected an E.164 phone number such as +966500000000");

export const email = z.email({ error: "expected an email address" });

/** Images must be public HTTPS addresses (their pixel sizes are checked upstream). */
export const httpsUrl = z.url({ protocol: /^https$/, error: "expected a public https:// URL" });

export const hhmm = z
  .string({ error: "expected a time HH:MM" })
  .regex(/^([01][0-9]|2[0-3]):[0-5][0-9]$/, "expected a time HH:MM from 00:00 to 23:59");

export const timezone = z.string().refine(isTimeZone, "expected an IANA time zone such as Asia/Riyadh");

/** A path or query identifier: non-empty, no whitespace. */
export const id = z
  .string({ error: "expected an ID string" })
  .regex(/^\S+$/, "expected a non-empty ID without spaces");

export const merchantId = z
  .string({ error: "expected a merchant ID (mer_...)" })
  .regex(/^mer_\S+$/, "expected a merchant ID (mer_...)");

export const idempotencyKey = z
  .string()
  .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, "expected a UUID");

export const pageLimit = z
  .number({ error: "expected an integer from 1 to 100" })
  .int("expected an integer from 1 to 100")
  .min(1, "expected an integer from 1 to 100")
  .max(100, "expected an integer from 1 to 100");

/** A date-time as a Date or an ISO 8601 string with offset; sent as ISO 8601 UTC. */
export const dateTime = z.union(
  [
    z.date().transform((d) => d.toISOString()),
    z.iso.datetime({ offset: true }).transform((s) => new Date(s).toISOString()),
  ],
  { error: "expected a Date or an ISO 8601 date-time such as 2026-01-31T12:00:00Z" },
);

function isTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat("en", { timeZone: value });
    return true;
  } catch {
    return false;
  }
}
