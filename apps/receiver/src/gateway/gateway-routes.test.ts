import { describe, expect, it } from "vitest";
import { GATEWAY_ROUTES, matchGatewayRoute } from "./gateway-routes.ts";

describe("matchGatewayRoute", () => {
  it("finds each of the spec's writes by its method and a path with ids", () => {
    const paths: Record<string, string> = {
      "/merchants": "/merchants",
      "/merchant": "/merchant",
      "/merchant/business-profile": "/merchant/business-profile",
      "/merchant/business-profile/documents": "/merchant/business-profile/documents",
      "/merchant/business-profile/submit": "/merchant/business-profile/submit",
      "/brands": "/brands",
      "/brands/{brand_id}": "/brands/brd_1",
      "/brands/{brand_id}/menu": "/brands/brd_1/menu",
      "/brands/{brand_id}/menu/publish": "/brands/brd_1/menu/publish",
      "/locations": "/locations",
      "/locations/{location_id}": "/locations/loc_1",
      "/sandbox/orders": "/sandbox/orders",
    };
    expect(GATEWAY_ROUTES.map((r) => r.route).sort()).toEqual(Object.keys(paths).sort());
    for (const route of GATEWAY_ROUTES)
      expect(matchGatewayRoute(route.method, paths[route.route]!)).toEqual({ found: route });
  });

  it("answers 405 with the write methods for a read of a written path, 404 for anything else", () => {
    expect(matchGatewayRoute("GET", "/locations/loc_1")).toEqual({ notAllowed: ["PATCH"] });
    expect(matchGatewayRoute("GET", "/brands")).toEqual({ notAllowed: ["POST"] });
    expect(matchGatewayRoute("DELETE", "/merchant")).toEqual({ notAllowed: ["PATCH"] });
    for (const path of ["/orders", "/connection", "/events/evt_1/redeliver", "/jobs/job_1", "/channels"])
      expect(matchGatewayRoute("POST", path)).toEqual({ notFound: true });
  });

  it("takes no id that could leave its segment", () => {
    for (const id of ["..", "a.b", "a%2Fb", "", "x".repeat(129)])
      expect(matchGatewayRoute("PATCH", `/locations/${id}`)).toEqual({ notFound: true });
  });

  it("holds a menu to 5 MB and a document's file to 4 MB (10^6 bytes each)", () => {
    const menu = GATEWAY_ROUTES.find((r) => r.route === "/brands/{brand_id}/menu")!;
    const document = GATEWAY_ROUTES.find((r) => r.route === "/merchant/business-profile/documents")!;
    expect(menu.maxBodyBytes).toBe(5_000_000);
    expect(document.maxFileBytes).toBe(4_000_000);
  });
});
