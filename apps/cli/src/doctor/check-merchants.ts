import type { Sql } from "@loops-sync/db";
import type { LoopsClient } from "@loops-sync/loops-client";
import { checkMerchant } from "./check-merchant.ts";
import { checkResult, type DoctorCheck } from "./doctor-check.ts";
import { readMerchantRoster, selectMerchants } from "./merchant-roster.ts";

/** Merchants asked at once: the shared budget paces them anyway; a few hide each round trip. */
const CONCURRENCY = 4;
/** Revoked merchants named in the line; `--json` lists them all. */
const NAMED = 20;

export interface MerchantsChecked {
  /** Merchants the deployment knows (configured and learned). */
  known: number;
  /** How many were asked of Loops. */
  checked: number;
  /** True when fewer were checked than could be (a sample; `--merchant` or `--sample` choose). */
  sampled: boolean;
  /** Known revoked: not called. */
  revoked: string[];
}

export interface CheckMerchantsOptions {
  configured: readonly string[];
  only?: string | undefined;
  sample: number;
  onProgress?: ((done: number, total: number) => void) | undefined;
}

/** Per merchant (a sample of a large deployment): connection, scopes, event log; and the revoked ones. */
export async function checkMerchants(
  sql: Sql,
  client: LoopsClient,
  { configured, only, sample, onProgress }: CheckMerchantsOptions,
): Promise<{ merchants: MerchantsChecked; checks: DoctorCheck[] }> {
  const roster = await readMerchantRoster(sql, configured);
  const selection = selectMerchants(roster, { only, sample });
  const checks: DoctorCheck[] = [];
  const merchants: MerchantsChecked = {
    known: roster.length,
    checked: selection.checked.length,
    sampled: selection.checked.length < selection.candidates,
    revoked: selection.revoked.map((m) => m.id),
  };
  if (roster.length === 0 && only === undefined) {
    checks.push(
      checkResult(
        "merchants",
        "warn",
        "finding",
        "no merchant known yet: none configured, none learned from an event",
        {
          fix: "set LOOPS_MERCHANT_IDS to your merchants' IDs (mer_…), or send a test order so a webhook names one",
        },
      ),
    );
  } else {
    const detail = merchants.sampled
      ? `checking ${merchants.checked} of ${selection.candidates} merchants (configured first, the rest at random)`
      : `checking ${merchants.checked} merchant(s)`;
    checks.push(
      checkResult("merchants", "ok", "finding", detail, {
        fix: merchants.sampled ? "`--merchant ID` checks one merchant, `--sample N` more of them" : null,
      }),
    );
  }
  const results: DoctorCheck[][] = new Array(selection.checked.length);
  let next = 0;
  let done = 0;
  const lane = async () => {
    while (next < selection.checked.length) {
      const i = next++;
      results[i] = await checkMerchant(client, selection.checked[i]!);
      onProgress?.(++done, selection.checked.length);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, selection.checked.length) }, lane));
  checks.push(...results.flat());
  checks.push(
    revokedMerchants(
      selection.revoked.map((m) => m.id),
      selection.revoked.filter((m) => m.configured).map((m) => m.id),
    ),
  );
  return { merchants, checks };
}

function revokedMerchants(revoked: readonly string[], configured: readonly string[]): DoctorCheck {
  if (revoked.length === 0)
    return checkResult(
      "revoked_merchants",
      "ok",
      "finding",
      "no merchant known to have revoked its connection",
    );
  const named =
    revoked.slice(0, NAMED).join(", ") +
    (revoked.length > NAMED ? ` and ${revoked.length - NAMED} more` : "");
  const detail = `${revoked.length} merchant(s) revoked their connection, not called: ${named}`;
  if (configured.length > 0) {
    return checkResult(
      "revoked_merchants",
      "fail",
      "finding",
      `${detail}; configured in LOOPS_MERCHANT_IDS: ${configured.join(", ")}`,
      {
        fix: "remove them from LOOPS_MERCHANT_IDS, or ask them to connect your application again",
      },
    );
  }
  return checkResult("revoked_merchants", "warn", "finding", detail, {
    fix: "nothing to do unless you expected them: a merchant that connects again is synced again by itself",
  });
}
