import type { BusinessProfile, Origin } from "./resources.ts";
import type { SandboxWorld } from "./world.ts";

export interface ProfileReviewerOptions {
  world: SandboxWorld;
  /** Sandbox ms from submit to decision. Default: 60 000 (a minute). */
  delayMs?: number;
}

const SYSTEM: Origin = { type: "system", application_id: null };

/** Channels a location gets once its merchant is approved, when the catalog has them. */
const GO_LIVE_CHANNELS = ["hungerstation", "jahez"];

/**
 * The Loops-side review of a submitted business profile. It approves, unless the legal name contains
 * "reject" (so a test or demo can ask for a rejection), after `delayMs`; admins can also decide at once.
 */
export class ProfileReviewer {
  readonly #world: SandboxWorld;
  readonly #delayMs: number;

  constructor({ world, delayMs = 60_000 }: ProfileReviewerOptions) {
    this.#world = world;
    this.#delayMs = delayMs;
  }

  submitted(profile: BusinessProfile): void {
    this.#world.clock.after(this.#delayMs, () => {
      if (profile.status !== "in_review") return;
      const legalName = String(profile.details?.legal_name ?? "");
      if (/reject/i.test(legalName))
        this.decide(
          profile,
          "rejected",
          "The commercial registration does not match the legal name; upload a current certificate.",
        );
      else this.decide(profile, "approved");
    });
  }

  decide(profile: BusinessProfile, decision: "approved" | "rejected", notes: string | null = null): void {
    const { store, clock } = this.#world;
    profile.status = decision;
    profile.review.reviewed_at = clock.iso();
    profile.review.notes =
      decision === "rejected" ? (notes ?? "Please review the uploaded documents.") : null;
    for (const doc of profile.documents) {
      doc.status = decision === "approved" ? "accepted" : "rejected";
      doc.rejection_reason = decision === "rejected" ? profile.review.notes : null;
    }
    const merchant = store.merchants.get(profile.merchant_id);
    if (merchant) merchant.business_profile_status = decision;
    if (decision === "approved") this.#goLive(profile.merchant_id);
    this.#world.emit(`business_profile.${decision}`, profile.merchant_id, null, SYSTEM, {
      merchant_id: profile.merchant_id,
      status: decision,
      notes: profile.review.notes,
    });
  }

  // "Locations go live after profile approval": each location without channel connections gets some.
  #goLive(merchantId: string): void {
    const { store, ids, clock } = this.#world;
    const channels = GO_LIVE_CHANNELS.filter((c) => store.channels.has(c));
    for (const location of store.locationsOf(merchantId)) {
      if (store.channelConnectionsOf(location.id).length) continue;
      for (const channel of channels.length ? channels : [...store.channels.keys()].slice(0, 1)) {
        const id = ids.next("chc");
        store.channelConnections.set(id, {
          id,
          location_id: location.id,
          channel,
          status: "active",
          updated_at: clock.iso(),
        });
      }
      location.status = "open";
      location.updated_at = clock.iso();
    }
  }
}
