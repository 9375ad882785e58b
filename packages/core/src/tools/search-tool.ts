import { z } from 'zod';
import { DEFAULT_SEARCH_RESULTS, MAX_SEARCH_QUERY, MAX_SEARCH_RESULTS } from '../ranking/search-limits.js';
import { defineTool, readsSkills, textArgument } from './skill-tool.js';

/**
 * `skills.search`: offered while the catalogue is partial (and always, if configured), so the model
 * can find a skill the catalogue did not list. The ranker is the catalogue's own.
 */
export const searchTool = defineTool({
  name: 'skills.search',
  wireName: 'skills_search',
  description:
    'Find skills by what they do, when no skill in the catalogue fits the task: returns the best-matching ' +
    'skills (name, description and a score from 0 to 1), best first. Activate one to use it.',
  input: z.strictObject({
    query: textArgument(MAX_SEARCH_QUERY, 'The task, in a few words (any language; typos are tolerated).'),
    limit: z
      .number({ error: 'must be a number' })
      .int({ error: 'must be a whole number' })
      .min(1, { error: 'must be at least 1' })
      .max(MAX_SEARCH_RESULTS, { error: `must be at most ${MAX_SEARCH_RESULTS}` })
      .optional()
      .describe(`How many skills at most (default ${DEFAULT_SEARCH_RESULTS}, at most ${MAX_SEARCH_RESULTS}).`),
  }),
  example: '{"query": "extract tables from a PDF", "limit": 5}',
  annotations: readsSkills('Search skills'),
  async execute({ query, limit }: { query: string; limit?: number }, context) {
    const results = context.search(query, limit ?? DEFAULT_SEARCH_RESULTS);
    const output =
      results.length === 0
        ? `No skill matches "${query.replace(/\s+/g, ' ').trim()}". Go on without a skill, or search with other words.`
        : JSON.stringify({ results });
    return {
      output,
      summary: {
        skill: null,
        count: results.length,
        candidates: results.map((result) => result.name),
        truncated: false,
      },
    };
  },
});
