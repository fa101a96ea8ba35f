// Run by test/package/gateway-client-install.test.ts on each Node line: writes through the gateway with the
// installed client and prints one JSON line per result.
import { createGatewayClient, isLoopsError } from "@loops-sync/gateway-client";

const [url, token, merchantId, locationId, opens] = process.argv.slice(2);
const print = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
print({ node: process.version });
const loops = createGatewayClient({ url, token });
const days = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"];
const week = Object.fromEntries(days.map((d) => [d, [{ opens, closes: "23:00" }]]));
const location = await loops.forMerchant(merchantId).locations.update(locationId, { opening_hours: week });
print({ updated: location.id, opens: location.opening_hours.sunday[0].opens });
try {
  await loops.forMerchant(merchantId).locations.update("loc_nope", { opening_hours: week });
} catch (error) {
  print({ refused: isLoopsError(error), code: error.code, status: error.status });
}
try {
  await createGatewayClient({ url, token: `${token}-wrong`, retry: { maxAttempts: 1 } })
    .forMerchant(merchantId)
    .locations.update(locationId, { opening_hours: week });
} catch (error) {
  print({ unauthorized: error.status });
}
