import type { Sql } from "@loops-sync/db";

const CHANNEL = "bench_order_version";

export interface ReplicaWatch {
  /** Calls `onVersion` with each order version as its commit becomes visible. */
  onVersion: (orderId: string, version: number, at: number) => void;
  /** Removes the trigger and stops listening. */
  close(): Promise<void>;
}

/**
 * Timestamps each replica.orders write at its commit: a trigger (this run's database only, added by the
 * bench and removed after) NOTIFYs `id version`, and Postgres delivers a NOTIFY only once its transaction
 * has committed, so the arrival time here is when a reader could first see the version.
 */
export async function watchReplicaVersions(
  sql: Sql,
  onVersion: (orderId: string, version: number, at: number) => void,
): Promise<ReplicaWatch> {
  await sql.unsafe(`
    create or replace function public.bench_notify_order_version() returns trigger language plpgsql as $$
    begin
      perform pg_notify('${CHANNEL}', new.id || ' ' || new.version);
      return null;
    end $$;
    drop trigger if exists bench_notify_order_version on replica.orders;
    create trigger bench_notify_order_version after insert or update on replica.orders
      for each row execute function public.bench_notify_order_version();`);
  const listening = await sql.listen(CHANNEL, (payload) => {
    const at = performance.now();
    const space = payload.lastIndexOf(" ");
    onVersion(payload.slice(0, space), Number(payload.slice(space + 1)), at);
  });
  return {
    onVersion,
    async close() {
      await listening.unlisten();
      await sql.unsafe(`
        drop trigger if exists bench_notify_order_version on replica.orders;
        drop function if exists public.bench_notify_order_version();`);
    },
  };
}
