import { readFile } from "node:fs/promises";
import { z } from "zod";
import { ProblemError } from "../problem.ts";

/** The sandbox's public demo credentials: safe to print, useless anywhere else. */
export const DEFAULT_SANDBOX_CREDENTIALS = {
  clientId: "sandbox-client",
  clientSecret: "sandbox-secret",
  applicationId: "app_loops_sync",
} as const;

export { DEFAULT_WEBHOOK_SECRET } from "./seed-constants.ts";

/** Every scope the sandbox knows; the three the spec names plus the ones it leaves unnamed. */
export const ALL_SCOPES = [
  "locations:read",
  "locations:write",
  "orders:read",
  "events:read",
  "merchants:read",
  "merchants:write",
  "brands:read",
  "brands:write",
  "menus:read",
  "menus:write",
  "business_profile:write",
] as const;

const text = z.object({ en: z.string().min(1), ar: z.string().min(1) });

const seedSchema = z.object({
  applications: z
    .array(
      z.object({
        clientId: z.string().min(1),
        clientSecret: z.string().min(1),
        applicationId: z.string().regex(/^app_/),
        kind: z.enum(["platform", "direct"]).default("platform"),
        scopes: z.array(z.string()).default([...ALL_SCOPES]),
      }),
    )
    .min(1),
  channels: z
    .array(z.object({ id: z.string().min(1), name: text, capabilities: z.array(z.string()).default([]) }))
    .min(1),
  merchants: z.array(
    z.object({
      id: z.string().regex(/^mer_/),
      name: text,
      /** Application ids the merchant is connected to. Default: every application. */
      applications: z.array(z.string()).optional(),
      /** Scopes the merchant grants. Default: every scope. */
      grantedScopes: z.array(z.string()).optional(),
      brands: z
        .array(
          z.object({
            id: z.string().regex(/^brd_/),
            name: text,
            locations: z.array(
              z.object({
                id: z.string().regex(/^loc_/),
                name: text,
                city: z.string().default("Riyadh"),
                timezone: z.string().default("Asia/Riyadh"),
                channels: z.array(z.string()).min(1),
              }),
            ),
          }),
        )
        .min(1),
    }),
  ),
});

export type SandboxSeed = z.output<typeof seedSchema>;
export type SandboxSeedInput = z.input<typeof seedSchema>;

/** An unreadable or invalid seed file: `detail` names the file and the first problem. */
function seedError(detail: string, cause?: unknown): ProblemError {
  return new ProblemError(400, "invalid_seed", { detail, cause });
}

export function parseSeed(input: unknown, source = "seed"): SandboxSeed {
  const parsed = seedSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw seedError(`${source}: ${issue.path.join(".") || "(root)"}: ${issue.message}`);
  }
  return parsed.data;
}

export async function loadSeedFile(path: string): Promise<SandboxSeed> {
  let raw: string;
  try {
    raw = await readFile(path, "utf8");
  } catch (cause) {
    throw seedError(`cannot read seed file ${path}`, cause);
  }
  try {
    return parseSeed(JSON.parse(raw), path);
  } catch (cause) {
    if (cause instanceof ProblemError && cause.code === "invalid_seed") throw cause;
    throw seedError(`seed file ${path} is not valid JSON`, cause);
  }
}

/** Two merchants, a brand each, two Riyadh locations each, on a few delivery channels. */
export function defaultSeed(): SandboxSeed {
  return parseSeed({
    applications: [
      { ...DEFAULT_SANDBOX_CREDENTIALS, kind: "platform" },
      {
        clientId: "sandbox-direct-client",
        clientSecret: "sandbox-direct-secret",
        applicationId: "app_direct_demo",
        kind: "direct",
      },
    ],
    channels: [
      {
        id: "hungerstation",
        name: { en: "HungerStation", ar: "هنقرستيشن" },
        capabilities: ["orders", "menu"],
      },
      { id: "jahez", name: { en: "Jahez", ar: "جاهز" }, capabilities: ["orders", "menu"] },
      { id: "keeta", name: { en: "Keeta", ar: "كيتا" }, capabilities: ["orders", "menu"] },
      { id: "careem", name: { en: "Careem", ar: "كريم" }, capabilities: ["orders"] },
    ],
    merchants: [
      {
        id: "mer_demo_1",
        name: { en: "Najd Grill", ar: "مشويات نجد" },
        brands: [
          {
            id: "brd_demo_1",
            name: { en: "Najd Grill", ar: "مشويات نجد" },
            locations: [
              {
                id: "loc_demo_1a",
                name: { en: "Olaya", ar: "العليا" },
                channels: ["hungerstation", "jahez"],
              },
              { id: "loc_demo_1b", name: { en: "Malqa", ar: "الملقا" }, channels: ["jahez", "keeta"] },
            ],
          },
        ],
      },
      {
        id: "mer_demo_2",
        name: { en: "Hijaz Coffee", ar: "قهوة الحجاز" },
        applications: ["app_loops_sync"],
        brands: [
          {
            id: "brd_demo_2",
            name: { en: "Hijaz Coffee", ar: "قهوة الحجاز" },
            locations: [
              {
                id: "loc_demo_2a",
                name: { en: "Tahlia", ar: "التحلية" },
                city: "Jeddah",
                channels: ["hungerstation", "careem"],
              },
              {
                id: "loc_demo_2b",
                name: { en: "Rawdah", ar: "الروضة" },
                city: "Jeddah",
                channels: ["keeta", "careem"],
              },
            ],
          },
        ],
      },
    ],
  });
}
