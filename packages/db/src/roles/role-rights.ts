/** What `loops-sync grant` can give a role: read the mirror, or read it and consume the feed. */
export type GrantableRights = "reader" | "consumer";

/** A role's rights as loops-sync gave them; each level includes the ones before it. */
export type RoleRights = "none" | GrantableRights;

export const GRANTABLE_RIGHTS: readonly GrantableRights[] = ["reader", "consumer"];

const LEVEL: Record<RoleRights, number> = { none: 0, reader: 1, consumer: 2 };

/**
 * The rights a role ends with, as SQL's GRANT and REVOKE would have it: granting adds (a consumer granted
 * reader stays a consumer); revoking a level takes it and everything above it (revoking reader from a consumer
 * leaves nothing, revoking consumer leaves a reader).
 */
export function rightsAfter(previous: RoleRights, requested: GrantableRights, revoke: boolean): RoleRights {
  if (!revoke) return LEVEL[requested] > LEVEL[previous] ? requested : previous;
  if (LEVEL[previous] < LEVEL[requested]) return previous;
  return requested === "consumer" ? "reader" : "none";
}
