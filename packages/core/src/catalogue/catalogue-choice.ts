import type { CatalogueFormat } from '../options/skills-options.schema.js';
import { catalogueFrame, type CatalogueEntry, renderListing, renderUnlisted } from './catalogue-renderer.js';
import type { CatalogueSnapshot } from './catalogue-snapshot.js';
import type { SkillRecord } from '../skill/skill.types.js';
import { entryOf } from './catalogue-index.js';
import { countTokens } from '../ranking/token-count.js';

/**
 * How big the catalogue in a prompt may be (`[app.skills] catalogue_budget_tokens`,
 * `catalogue_max_skills`) and its format. Whether entries carry their location is the snapshot's
 * (`include_location`, what its token counts were made with).
 */
export interface CatalogueLimits {
  budgetTokens: number;
  maxSkills: number;
  format: CatalogueFormat;
}

/** What a turn brings to the choice of a partial catalogue. */
export interface CatalogueRequest {
  /** The user's message this turn. */
  message: string;
  /** The chat's last messages, weaker evidence than the message. */
  context?: string;
  /** Listed whatever their rank, first, in this order: the chat's activated skills and the skills invoked this turn. */
  pinned?: readonly string[];
  /**
   * The team's recent activations per skill, most used first (the ranker's tie-breaker among near-equals, and what
   * fills the rest).
   */
  popularity?: ReadonlyMap<string, number>;
  /** Whether the model is offered skills_search this turn (the note says how to find the rest). */
  searchable: boolean;
  /** The search tool's name as the note gives it (default `skills_search`, the chat's). */
  searchToolName?: string;
  /**
   * After the ranked and the most used skills, the rest in name order while they fit: a catalogue
   * made with no message to rank for (MCP's, listed once per session) fills its budget.
   */
  fill?: boolean;
  /**
   * Entries without their SKILL.md path even when `include_location` is on: every catalogue the
   * server's own doors show (chats, previews, MCP), whose readers (its members, their models, clients
   * on other machines) can read no file of the server's by its path and must not learn them.
   * (The budget is still counted with the locations: an upper bound.)
   */
  hideLocations?: boolean;
  /**
   * Rank even when every skill fits the budget: what a turn would list once the catalogue is partial (trigger evals
   * measure what a description earns, whatever the team's size today).
   */
  ranked?: boolean;
}

/** The catalogue a turn shows. */
export interface CatalogueChoice {
  text: string;
  /** Every skill the chat may use is listed (in name order, the same bytes every turn). */
  complete: boolean;
  /** Listed skills, in the order shown. */
  listed: readonly string[];
  /** Skills the chat may use that are not listed. */
  unlisted: number;
  /** o200k tokens of `text` as the budget counts them (each entry with its separator, plus the frame and the note). */
  tokens: number;
}

/** Whether every skill of the view fits the limits: then every turn lists them all, the same bytes. */
export function catalogueIsComplete(view: CatalogueSnapshot, limits: CatalogueLimits): boolean {
  return view.skills.size <= limits.maxSkills && view.index.wholeCost(view, limits.format) <= limits.budgetTokens;
}

/** Every skill of the view in name order, whatever the budget; `hideLocations` as in CatalogueRequest. */
export function wholeCatalogue(view: CatalogueSnapshot, format: CatalogueFormat, hideLocations: boolean): string {
  return hideLocations && view.index.includeLocation
    ? renderListing([...view.skills.values()].map(entryOf), format, false)
    : view.catalogue(format);
}

/**
 * The catalogue for one turn. When the view's skills all fit the budget and the count, all of them
 * in name order (`view.catalogue`, identical from turn to turn). Otherwise the pinned skills, then
 * the best-ranked for the message (its last messages as weaker context), then the team's most used,
 * each entry whole or not at all, until the budget or the count is reached; a closing note says
 * how many more exist and how to find them. Pinned skills are listed even past the budget.
 */
export function chooseCatalogue(
  view: CatalogueSnapshot,
  limits: CatalogueLimits,
  request: CatalogueRequest,
): CatalogueChoice {
  const { format } = limits;
  const includeLocation = view.index.includeLocation && request.hideLocations !== true;
  const total = view.skills.size;
  if (request.ranked !== true && catalogueIsComplete(view, limits)) {
    const text = wholeCatalogue(view, format, !includeLocation);
    return {
      text,
      complete: true,
      listed: [...view.skills.keys()],
      unlisted: 0,
      tokens: view.index.wholeCost(view, format),
    };
  }
  const index = view.index;
  const search = { searchable: request.searchable, toolName: request.searchToolName ?? DEFAULT_SEARCH_TOOL };
  const closing = closingCost(format, total, search);
  let tokens = closing;
  const chosen: SkillRecord[] = [];
  const taken = new Set<string>();
  const take = (record: SkillRecord | undefined, force: boolean) => {
    if (record === undefined || taken.has(record.name) || (!force && chosen.length >= limits.maxSkills)) return;
    const cost = index.tokensOf(record, format);
    if (!force && tokens + cost > limits.budgetTokens) return;
    chosen.push(record);
    taken.add(record.name);
    tokens += cost;
  };
  for (const name of request.pinned ?? []) take(view.skills.get(name), true);
  addRanked(view, limits, request, chosen, take);
  if (request.fill === true) {
    for (const record of view.skills.values()) {
      if (chosen.length >= limits.maxSkills) break;
      take(record, false);
    }
  }
  const unlisted = total - chosen.length;
  const entries: CatalogueEntry[] = chosen.map(entryOf);
  const note = { count: unlisted, note: unlistedNote(unlisted, search) };
  let text = renderListing(entries, format, includeLocation, note);
  if (entries.length === 0 && format === 'markdown') text = text.replace(/^\n/, '');
  return { text, complete: false, listed: chosen.map((record) => record.name), unlisted, tokens };
}

/** The best-ranked skills for the message, then the team's most used, while places are left. */
function addRanked(
  view: CatalogueSnapshot,
  limits: CatalogueLimits,
  request: CatalogueRequest,
  chosen: readonly SkillRecord[],
  take: (record: SkillRecord | undefined, force: boolean) => void,
): void {
  if (chosen.length < limits.maxSkills && request.message.trim() !== '') {
    // More candidates than places: an entry too large for what is left of the budget is passed over for the next.
    const candidates = Math.min(limits.maxSkills * CANDIDATES_PER_PLACE, MAX_CANDIDATES);
    for (const match of view.index.search(view, request.message, {
      limit: candidates,
      context: request.context,
      popularity: request.popularity,
    })) {
      take(view.skills.get(match.name), false);
      if (chosen.length >= limits.maxSkills) break;
    }
  }
  if (chosen.length < limits.maxSkills && request.popularity !== undefined) {
    // The popularity map comes most used first (as the repository reads it).
    for (const [name, uses] of request.popularity) if (uses > 0) take(view.skills.get(name), false);
  }
}

/** How many ranked skills a turn considers for each place in its catalogue, and at most. */
const CANDIDATES_PER_PLACE = 3;
const MAX_CANDIDATES = 500;

/**
 * The frame and the closing note (counted once per distinct text by countTokens): the note's count
 * is at most the total, so counting it with the total's digits keeps the sum an upper bound.
 */
function closingCost(format: CatalogueFormat, total: number, search: SearchNote): number {
  return (
    countTokens(catalogueFrame(format).open) +
    countTokens(renderUnlisted({ count: total, note: unlistedNote(total, search) }, format))
  );
}

const DEFAULT_SEARCH_TOOL = 'skills_search';

interface SearchNote {
  searchable: boolean;
  toolName: string;
}

function unlistedNote(count: number, search: SearchNote): string {
  const skills = count === 1 ? '1 more skill is' : `${count} more skills are`;
  return search.searchable
    ? `${skills} not listed here: find them with the ${search.toolName} tool when no listed skill fits the task.`
    : `${skills} not listed here; the user can invoke any skill by name.`;
}
