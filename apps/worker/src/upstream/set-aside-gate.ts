import type { Logger } from "@loops-sync/config";
import type { Sql } from "@loops-sync/db";
import {
  classifyUpstreamFailure,
  clearSetAside,
  type ExtraResource,
  setAsideFor,
  setAsideResource,
  type UpstreamFailure,
} from "@loops-sync/replica";

/** The error of an event left unapplied because its resource is set aside. */
export const SET_ASIDE_OUTCOME = (resource: string) =>
  `not read: Loops refused the scope for ${resource} (set aside); grant it, then \`loops-sync refresh\``;

export interface SetAsideGate {
  /**
   * Reads an extra resource: undefined, with no call, while `resource` is set aside (unless `retryNow`);
   * undefined too when Loops refuses its scope now (recorded, logged once at warn). A success clears a
   * set-aside of `resource`. Any other error is thrown.
   */
  read<T>(resource: ExtraResource, call: () => Promise<T>): Promise<T | undefined>;
  /** The resources set aside during or before this run (skipped or refused). */
  setAside(): ExtraResource[];
}

/** Records a `set_aside` failure met for `merchantId`, logging it at warn the first time only. */
export async function recordSetAside(
  sql: Sql,
  logger: Logger | undefined,
  failure: Extract<UpstreamFailure, { kind: "set_aside" }>,
  merchantId: string,
  context: Record<string, unknown> = {},
): Promise<void> {
  const { retryAt, first } = await setAsideResource(sql, failure, merchantId);
  if (first) {
    logger?.warn(
      {
        ...context,
        merchantId,
        resource: failure.resource,
        scope: failure.scope,
        cause: failure.cause,
        retryAt,
      },
      "Loops refused the scope of an extra resource; it is set aside (orders go on) until the scope is granted",
    );
  }
}

/**
 * The set-aside resources of one merchant for one run (a reconcile, a refresh task): which to skip and
 * what to record. `retryNow` (`loops-sync refresh`) calls set-aside resources regardless of their retry_at.
 */
export async function openSetAsideGate(
  sql: Sql,
  merchantId: string,
  { logger, retryNow = false }: { logger?: Logger | undefined; retryNow?: boolean } = {},
): Promise<SetAsideGate> {
  const known = await setAsideFor(sql, merchantId);
  const skipped = new Set<ExtraResource>();
  return {
    async read(resource, call) {
      const retryAt = known.get(resource);
      if (skipped.has(resource)) return undefined;
      if (retryAt && !retryNow && retryAt > new Date()) {
        skipped.add(resource);
        return undefined;
      }
      try {
        const value = await call();
        if (retryAt) {
          await clearSetAside(sql, merchantId, resource);
          known.delete(resource);
        }
        return value;
      } catch (error) {
        const failure = classifyUpstreamFailure(error);
        if (failure.kind !== "set_aside") throw error;
        await recordSetAside(sql, logger, failure, merchantId);
        skipped.add(resource);
        if (failure.resource !== resource) skipped.add(failure.resource);
        return undefined;
      }
    },
    setAside: () => [...skipped],
  };
}
