import type { StoredSkillFilter } from '../shared/skill-filter.js';
import type { CatalogueSnapshot } from '@skillhost/core';

/** The loaded skills as each user sees them (the server's SkillRegistryService). */
export interface CatalogueViews {
  readonly enabled: boolean;
  viewFor(ownerId: string | undefined, filters: readonly (StoredSkillFilter | null | undefined)[]): CatalogueSnapshot;
  /** The user's view (their groups' skills and their own) narrowed by `filters`. */
  userView(userId: string, filters: readonly (StoredSkillFilter | null | undefined)[]): Promise<CatalogueSnapshot>;
}

/**
 * The user's view of the catalogue in a chat (their groups' and personal skills, the user's and the chat's filters);
 * undefined with skills off.
 */
export async function chatView(
  views: CatalogueViews,
  userId: string,
  filters: { userFilter: StoredSkillFilter | null; chatFilter: StoredSkillFilter | null },
): Promise<CatalogueSnapshot | undefined> {
  return views.enabled ? views.userView(userId, [filters.userFilter, filters.chatFilter]) : undefined;
}
