/** The limits of a skill search, one set for the tool (zod), REST (class-validator) and GraphQL. */

/** `skills.search`, `GET /v1/skills/search` and `searchSkills` return at most this many. */
export const MAX_SEARCH_RESULTS = 20;
export const DEFAULT_SEARCH_RESULTS = 10;
/** A query is what the task is about in a few words; a longer one is refused rather than cut. */
export const MAX_SEARCH_QUERY = 2000;
/**
 * A message to preview (`?query=` on the catalogue, `?message=` on a chat's context): as long as a chat message may be.
 */
export const MAX_PREVIEW_MESSAGE = 100_000;
