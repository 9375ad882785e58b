/** A skill filter as stored (a user's, a chat's): absent lists mean "no restriction". */
export interface StoredSkillFilter {
  include?: string[];
  exclude?: string[];
}

/** A filter entry: a name, or a prefix ending in `*`; no spaces or control characters, at most 65 characters. */
export const FILTER_ENTRY_PATTERN = /^[^\s\p{Cc}*]{1,64}\*?$/u;
