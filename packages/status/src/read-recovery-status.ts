import type { TransactionSql } from "@loops-sync/db";
import { redactSecrets } from "./redact-secrets.ts";
import type { RecoveryStatus } from "./sync-status.ts";

/**
 * What recovers without an operator but should be seen: scopes paused because Loops refused their calls
 * (sync.upstream_pauses), extra resources set aside because Loops refused their scope
 * (sync.resource_refusals), and events Postgres could never store (sync.refused_events).
 */
export async function readRecoveryStatus(tx: TransactionSql): Promise<RecoveryStatus> {
  const pauses = await tx<
    {
      scope: string;
      cause: string;
      detail: string | null;
      merchant_id: string;
      paused_at: Date;
      probe_at: Date;
      probes: number;
    }[]
  >`
    select scope, cause, detail, merchant_id, paused_at, probe_at, probes
    from sync.upstream_pauses order by scope = 'application' desc, scope`;
  const setAside = await tx<
    {
      scope: string;
      merchant_id: string | null;
      resource: string;
      code: string;
      message: string | null;
      refused_at: Date;
      retry_at: Date;
      refusals: number;
    }[]
  >`
    select scope, merchant_id, resource, code, message, refused_at, retry_at, refusals
    from sync.resource_refusals order by scope = 'application' desc, merchant_id, resource`;
  const [refused] = await tx<{ total: number; last_day: number }[]>`
    select count(*)::int as total,
           count(*) filter (where refused_at > now() - interval '1 day')::int as last_day
    from sync.refused_events`;
  return {
    pauses: pauses.map((p) => ({
      scope: p.scope,
      cause: p.cause,
      detail: redactSecrets(p.detail),
      merchantId: p.merchant_id,
      pausedAt: p.paused_at.toISOString(),
      nextProbeAt: p.probe_at.toISOString(),
      probes: p.probes,
    })),
    refusedEvents: { total: refused?.total ?? 0, lastDay: refused?.last_day ?? 0 },
    setAside: setAside.map((r) => ({
      scope: r.scope,
      merchantId: r.merchant_id,
      resource: r.resource,
      code: r.code,
      detail: redactSecrets(r.message),
      refusedAt: r.refused_at.toISOString(),
      retryAt: r.retry_at.toISOString(),
      refusals: r.refusals,
    })),
  };
}
