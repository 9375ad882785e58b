/** A skill filter as stored (a user's, a chat's): absent lists mean "no restriction". */
export interface StoredSkillFilter {
  include?: string[];
  exclude?: string[];
}
