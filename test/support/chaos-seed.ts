// A sandbox seed with secrets of this run only (so the secrets suite can look for the exact values) and a
// third merchant, so faults land on several merchants' queues and cursors at once.

import { randomBytes } from "node:crypto";
import { defaultSeed, type SandboxSeed } from "@loops-sync/sandbox";

export interface ChaosSeed {
  seed: SandboxSeed;
  credentials: { clientId: string; clientSecret: string; applicationId: string };
  webhookSecret: string;
  merchantIds: string[];
}

/** The default seed with fresh secrets and `merchants` merchants (at least 2). Default: 3 merchants. */
export function chaosSeed({
  merchants = 3,
  label = "chaos",
}: {
  merchants?: number;
  label?: string;
} = {}): ChaosSeed {
  const seed = defaultSeed();
  const app = seed.applications[0]!;
  app.clientSecret = `${label}-client-secret-${randomBytes(12).toString("hex")}`;
  const template = seed.merchants[0]!;
  for (let n = seed.merchants.length + 1; n <= merchants; n++) {
    const copy = structuredClone(template);
    copy.id = `mer_${label}_${n}`;
    for (const brand of copy.brands) {
      brand.id = `${brand.id}_${n}`;
      for (const location of brand.locations) location.id = `${location.id}_${n}`;
    }
    seed.merchants.push(copy);
  }
  return {
    seed,
    credentials: { clientId: app.clientId, clientSecret: app.clientSecret, applicationId: app.applicationId },
    webhookSecret: `whsec_${randomBytes(24).toString("base64")}`,
    merchantIds: seed.merchants.map((m) => m.id),
  };
}
