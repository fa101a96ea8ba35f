import type { SyncMerchantApi } from "@loops-sync/loops-client";

/** A view of `api` that counts the calls made through it (each method of each resource is one request). */
export function countingApi(api: SyncMerchantApi): { api: SyncMerchantApi; calls(): number } {
  let calls = 0;
  const wrap = <T extends object>(resource: T): T =>
    new Proxy(resource, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          calls++;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  const counted = new Proxy(api, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "object" && value !== null ? wrap(value) : value;
    },
  });
  return { api: counted, calls: () => calls };
}
