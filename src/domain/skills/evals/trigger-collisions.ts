import type { EvalView } from './catalogue-eval.js';
import type { TriggerCase } from './trigger-evals.js';

/** A skill's request for which another skill's description competes: it ranks as high, or nearly. */
export interface TriggerCollision {
  query: string;
  skill: string;
  competitor: string;
  /** The ranker's scores (0..1) of the two for the request. */
  skillScore: number;
  competitorScore: number;
}

/** A competitor within this share of the skill's score counts: the chooser's order between them is a coin toss. */
export const COLLISION_MARGIN = 0.9;
/** How far down the ranking competitors are looked for. */
const RANKED_LOOKED_AT = 10;

/**
 * Team-wide: for each skill's positive cases, the other skills that rank at least COLLISION_MARGIN of its score (or
 * above it) for the request. A case whose skill does not rank at all is a miss (its recall says so), not a collision.
 */
export function findCollisions(
  view: EvalView,
  skills: readonly { skill: string; cases: readonly TriggerCase[] }[],
): TriggerCollision[] {
  const collisions: TriggerCollision[] = [];
  for (const { skill, cases } of skills) {
    for (const entry of cases) {
      if (!entry.shouldTrigger) continue;
      const ranked = view.index.search(view, entry.query, { limit: RANKED_LOOKED_AT });
      const own = ranked.find((match) => match.name === skill);
      if (own === undefined) continue;
      for (const other of ranked) {
        if (other.name === skill || other.score < own.score * COLLISION_MARGIN) continue;
        collisions.push({
          query: entry.query,
          skill,
          competitor: other.name,
          skillScore: own.score,
          competitorScore: other.score,
        });
      }
    }
  }
  return collisions;
}
