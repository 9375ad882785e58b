/** How many files a skill version may hold (installed, or pinned from disk). */
export const MAX_SKILL_FILES = 1_000;
