import { z } from "zod";

/** Bilingual customer-facing text as read; either side may be null. */
export const LocalizedTextSchema = z.looseObject({
  en: z.string().nullish(),
  ar: z.string().nullish(),
});
export type LocalizedText = z.output<typeof LocalizedTextSchema>;

/** Money in integer minor units (halalas for SAR). */
export const MoneySchema = z.looseObject({
  amount: z.number().int(),
  currency: z.string(),
});
export type Money = z.output<typeof MoneySchema>;

/** A cursor page: `next_cursor` is null on the last page. */
export interface Page<T> {
  data: T[];
  next_cursor: string | null;
  [key: string]: unknown;
}

export function pageSchema<T extends z.ZodType>(item: T) {
  return z.looseObject({
    data: z.array(item),
    next_cursor: z
      .string()
      .nullish()
      .transform((v) => v ?? null),
  });
}

/** A `{ data: [...] }` list that is not paged (channels, channel connections). */
export function listSchema<T extends z.ZodType>(item: T) {
  return z.looseObject({ data: z.array(item) });
}

/** A problem item of a job (import error or a delivery app's rejection). */
export const ProblemItemSchema = z.looseObject({
  external_ref: z.string().nullish(),
  field: z.string().nullish(),
  code: z.string(),
  message: z.string(),
});
export type ProblemItem = z.output<typeof ProblemItemSchema>;
