import { defaultSeed, parseSeed, type SandboxSeed } from "./seed.ts";
import { MAX_GENERATED_MERCHANTS } from "./seed-constants.ts";

export { MAX_GENERATED_MERCHANTS };

/**
 * The demo applications and channels with `count` generated merchants (`mer_t00001` …), one brand and one
 * location each: a platform application's many merchants, for scale tests and benchmarks.
 */
export function manyMerchantsSeed(count: number): SandboxSeed {
  if (!Number.isInteger(count) || count < 1 || count > MAX_GENERATED_MERCHANTS) {
    throw new RangeError(
      `merchants: expected a whole number from 1 to ${MAX_GENERATED_MERCHANTS}, got ${count}`,
    );
  }
  const base = defaultSeed();
  const merchants = Array.from({ length: count }, (_, i) => {
    const n = String(i + 1).padStart(5, "0");
    return {
      id: `mer_t${n}`,
      name: { en: `Tenant ${n}`, ar: `مستأجر ${n}` },
      brands: [
        {
          id: `brd_t${n}`,
          name: { en: `Tenant ${n}`, ar: `مستأجر ${n}` },
          locations: [{ id: `loc_t${n}`, name: { en: "Olaya", ar: "العليا" }, channels: ["hungerstation"] }],
        },
      ],
    };
  });
  return parseSeed({ ...base, merchants }, `${count} generated merchants`);
}
