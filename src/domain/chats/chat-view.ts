import type { StoredSkillFilter } from '../shared/skill-filter.js';
import type { CatalogueSnapshot } from '@skillhost/core';

/** The loaded skills as each user sees them (the server's SkillRegistryService). */
export interface CatalogueViews {
  readonly enabled: boolean;
  viewFor(ownerId: string | undefined, filters: readonly (StoredSkillFilter | null | undefined)[]): CatalogueSnapshot;
}

/**
 * The user's view of the catalogue in a chat (personal skills, the user's and the chat's filters); undefined with
 * skills off.
 */
export function chatView(
  views: CatalogueViews,
  userId: string,
  filters: { userFilter: StoredSkillFilter | null; chatFilter: StoredSkillFilter | null },
): CatalogueSnapshot | undefined {
  return views.enabled ? views.viewFor(userId, [filters.userFilter, filters.chatFilter]) : undefined;
}
