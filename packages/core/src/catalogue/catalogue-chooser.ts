import type { SkillsConfig } from '../options/skills-config.js';
import type { CatalogueSnapshot } from './catalogue-snapshot.js';
import {
  type CatalogueChoice,
  catalogueIsComplete,
  type CatalogueLimits,
  type CatalogueRequest,
  chooseCatalogue,
} from './catalogue-choice.js';
import { DEFAULT_SEARCH_RESULTS, MAX_SEARCH_RESULTS } from '../ranking/search-limits.js';

/** A search result as REST, GraphQL and the tool show it. */
export interface SkillSearchResult {
  name: string;
  description: string;
  /** 0..1: how well the skill fits the query (its relevance, normalised); results come in this order. */
  score: number;
}

/**
 * Choosing skills at scale, without state of its own: the catalogue a turn lists (whole, or ranked
 * within the budget), whether `skills.search` is offered, and search. The server's
 * SkillSearchService adds the team's use of skills (from PostgreSQL) as `popularity`; an app
 * embedding Skillhost may give its own, or none.
 */
export class CatalogueChooser {
  constructor(
    private readonly config: Pick<
      SkillsConfig,
      'catalogueBudgetTokens' | 'catalogueMaxSkills' | 'catalogueFormat' | 'searchTool'
    >,
    private readonly popularity: () => ReadonlyMap<string, number> = () => new Map(),
  ) {}

  get limits(): CatalogueLimits {
    const { catalogueBudgetTokens, catalogueMaxSkills, catalogueFormat } = this.config;
    return { budgetTokens: catalogueBudgetTokens, maxSkills: catalogueMaxSkills, format: catalogueFormat };
  }

  /** Whether the view's skills all fit the budget (every turn then lists them all, byte-identical). */
  isComplete(view: CatalogueSnapshot): boolean {
    return catalogueIsComplete(view, this.limits);
  }

  /** Whether the model is offered skills.search with this view: with a partial catalogue, or always if configured. */
  offersSearch(view: CatalogueSnapshot): boolean {
    return this.config.searchTool === 'always' || !this.isComplete(view);
  }

  /** The catalogue a turn with this message would list. `format` overrides the configured one (the catalogue route). */
  catalogue(
    view: CatalogueSnapshot,
    request: Omit<CatalogueRequest, 'popularity'>,
    format = this.config.catalogueFormat,
  ): CatalogueChoice {
    return chooseCatalogue(view, { ...this.limits, format }, { ...request, popularity: this.popularity() });
  }

  /** The view's skills best matching a query, best first, at most `MAX_SEARCH_RESULTS`. */
  search(view: CatalogueSnapshot, query: string, limit = DEFAULT_SEARCH_RESULTS): SkillSearchResult[] {
    const ranked = view.index.search(view, query, {
      limit: Math.min(Math.max(1, Math.floor(limit)), MAX_SEARCH_RESULTS),
      popularity: this.popularity(),
    });
    return ranked.map(({ name, description, score }) => ({ name, description, score }));
  }
}
