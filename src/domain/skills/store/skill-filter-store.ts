import type { StoredSkillFilter } from '../../shared/skill-filter.js';

/** Users' own skill filters as the store's rules keep them (infra's UserRepository implements it). */
export interface UserSkillFilters {
  /** The user's skill filter (`PUT /v1/me/skills`); null for none (or no such user). */
  skillFilter(userId: string): Promise<StoredSkillFilter | null>;
  /** False when there is no such user. */
  setSkillFilter(userId: string, filter: StoredSkillFilter | null): Promise<boolean>;
  /** The ids of the groups the user is in: a skill shared with groups is offered to their members only. */
  groupIds(userId: string): Promise<string[]>;
}

/** Chats' skill filters as the store's rules set them (infra's ChatRepository implements it). */
export interface ChatSkillFilters {
  /** Sets the owner's chat's skill filter; false when the owner has no such chat. */
  setSkillFilter(chatId: string, ownerId: string, filter: StoredSkillFilter | null): Promise<boolean>;
}

export const USER_SKILL_FILTERS = Symbol('USER_SKILL_FILTERS');
export const CHAT_SKILL_FILTERS = Symbol('CHAT_SKILL_FILTERS');
