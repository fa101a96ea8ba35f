import { describe, expect, it } from "vitest";
import { brandIdOf, jobIdOf, routeEvent } from "./route-event.ts";

describe("routeEvent", () => {
  it("routes each family of event types to the task that answers it", () => {
    expect(routeEvent("order.created")).toBe("order");
    expect(routeEvent("order.status_changed")).toBe("order");
    expect(routeEvent("connection.revoked")).toBe("revocation");
    expect(routeEvent("connection.updated")).toBe("merchant");
    expect(routeEvent("job.completed")).toBe("job");
    expect(routeEvent("business_profile.approved")).toBe("go_live");
    expect(routeEvent("business_profile.rejected")).toBe("merchant");
    expect(routeEvent("brand.updated")).toBe("brand");
    expect(routeEvent("menu.updated")).toBe("brand");
    expect(routeEvent("location.updated")).toBe("locations");
    expect(routeEvent("channel_connection.failing")).toBe("locations");
  });

  it("leaves anything else unhandled rather than failing", () => {
    expect(routeEvent("portal.test")).toBe("unhandled");
    expect(routeEvent("")).toBe("unhandled");
    expect(routeEvent("orders")).toBe("unhandled");
  });
});

describe("jobIdOf", () => {
  it("reads the job id from the shapes a job.completed payload may take", () => {
    expect(jobIdOf({ job_id: "job_1" })).toBe("job_1");
    expect(jobIdOf({ job: { id: "job_2" } })).toBe("job_2");
    expect(jobIdOf({ id: "job_3", status: "succeeded" })).toBe("job_3");
  });

  it("answers undefined when no id is there", () => {
    expect(jobIdOf(null)).toBeUndefined();
    expect(jobIdOf({ job_id: 7 })).toBeUndefined();
    expect(jobIdOf("job_4")).toBeUndefined();
  });
});

describe("brandIdOf", () => {
  it("reads the brand id of a brand.* or menu.* payload", () => {
    expect(brandIdOf("brand.updated", { brand_id: "brd_1" })).toBe("brd_1");
    expect(brandIdOf("menu.updated", { brand: { id: "brd_2" } })).toBe("brd_2");
    expect(brandIdOf("brand.created", { id: "brd_3" })).toBe("brd_3");
  });

  it("does not take a menu event's own id for a brand", () => {
    expect(brandIdOf("menu.updated", { id: "men_1" })).toBeUndefined();
    expect(brandIdOf("brand.updated", null)).toBeUndefined();
  });
});
