// A partner's TypeScript against the installed @loops-sync/gateway-client: must type-check
// (test/package/gateway-client-install.test.ts).
import { createGatewayClient, isLoopsError, type Location, type Merchant } from "@loops-sync/gateway-client";

const loops = createGatewayClient({ url: "http://127.0.0.1:9091", token: "a-token-of-16-chars" });
const merchant: Merchant = await loops.merchants.create({
  external_ref: "m-1",
  name: { en: "Cafe", ar: "مقهى" },
  owner: { name: "Huda", email: "huda@example.com", phone: "+966512345678" },
});
const week = { sunday: [{ opens: "09:00", closes: "23:00" }], monday: [], tuesday: [], wednesday: [] };
const location: Location = await loops
  .forMerchant(merchant.id)
  .locations.update("loc_1", { opening_hours: { ...week, thursday: [], friday: [], saturday: [] } });
try {
  await loops.forMerchant(merchant.id).menus.import("brd_1", { categories: [], products: [] });
} catch (error) {
  if (isLoopsError(error)) console.log(error.code, error.status);
}
console.log(location.opening_hours?.sunday?.[0]?.opens);
