/**
 * The skill store, as the registry and the resources service find it: provided by the server's
 * SkillStoreModule, absent in an app that embeds Skillhost (so that importing the library does not
 * load the store, its repositories and TypeORM).
 */
export const SKILL_STORE = Symbol('SKILLHOST_SKILL_STORE');
