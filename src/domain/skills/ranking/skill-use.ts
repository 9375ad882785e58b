/** The team's use of its skills, which search ranks by (infra's ChatRepository implements it over activations). */
export interface SkillUse {
  /**
   * In how many chats each skill was activated within the last `days` days, the most used first (at most `limit`),
   * counted once per chat.
   */
  skillUse(days: number, limit: number): Promise<Map<string, number>>;
}

export const SKILL_USE = Symbol('SKILL_USE');
