/** GET /brands/{id}/menu as the replica needs it; the whole menu is kept in `replica.menus.raw`. */
export interface MenuInput {
  brand_id: string;
  version: number;
  updated_at?: string | null;
  categories?: unknown;
  modifier_groups?: unknown;
  products?: unknown;
}
