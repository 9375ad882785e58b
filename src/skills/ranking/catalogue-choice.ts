import type { CatalogueFormat } from '../../config/app-config.js';
import { catalogueFrame, type CatalogueEntry, renderEntry, renderListing, renderUnlisted } from '../catalogue-renderer.js';
import type { CatalogueSnapshot } from '../catalogue-snapshot.js';
import type { SkillRecord } from '../skill.types.js';
import { type RankedSkill, SkillRanker } from './skill-ranker.js';
import { countTokens } from './token-count.js';

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
  /** The team's recent activations per skill, most used first (the ranker's tie-breaker among near-equals, and what fills the rest). */
  popularity?: ReadonlyMap<string, number>;
  /** Whether the model is offered skills_search this turn (the note says how to find the rest). */
  searchable: boolean;
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

/**
 * The ranking side of a snapshot: an index of every skill it holds (team and personal; a view
 * filters by record) and each skill's catalogue entry size in tokens, both built once with the
 * snapshot.
 */
export class CatalogueIndex {
  /** Entry sizes by format: the configured one counted at build, another (a catalogue route's `format`) on first use. */
  private readonly entryTokens: Map<CatalogueFormat, Map<SkillRecord, number>>;
  /** What a view's whole catalogue costs, by format, computed once per view. */
  private readonly wholeCosts = new WeakMap<CatalogueSnapshot, Map<CatalogueFormat, number>>();

  private constructor(
    private readonly ranker: SkillRanker,
    private readonly records: readonly SkillRecord[],
    counted: { format: CatalogueFormat; tokens: Map<SkillRecord, number> },
    /** Whether entries show their SKILL.md path (`include_location`). */
    readonly includeLocation: boolean,
  ) {
    this.entryTokens = new Map([[counted.format, counted.tokens]]);
  }

  /** Built a slice at a time (tokenizing and indexing thousands of skills takes a while). */
  static *building(records: readonly SkillRecord[], format: CatalogueFormat, includeLocation: boolean): Generator<void, CatalogueIndex> {
    const tokens = new Map<SkillRecord, number>();
    for (let i = 0; i < records.length; i++) {
      tokens.set(records[i], entryCost(records[i], format, includeLocation));
      // runInSlices gives the loop a turn every few milliseconds: a step per few skills lets it.
      if ((i + 1) % 16 === 0) yield;
    }
    const ranker = yield* SkillRanker.building(records.map((record) => ({ name: record.name, description: record.description, triggers: triggersOf(record) })));
    return new CatalogueIndex(ranker, records, { format, tokens }, includeLocation);
  }

  /** Tokens of a skill's entry with its separator. */
  tokensOf(record: SkillRecord, format: CatalogueFormat): number {
    let tokens = this.entryTokens.get(format);
    if (tokens === undefined) this.entryTokens.set(format, (tokens = new Map()));
    let cost = tokens.get(record);
    if (cost === undefined) tokens.set(record, (cost = entryCost(record, format, this.includeLocation)));
    return cost;
  }

  /** Tokens of the view's whole catalogue (frame and every entry). */
  wholeCost(view: CatalogueSnapshot, format: CatalogueFormat): number {
    let costs = this.wholeCosts.get(view);
    if (costs === undefined) this.wholeCosts.set(view, (costs = new Map()));
    let tokens = costs.get(format);
    if (tokens === undefined) {
      const frame = catalogueFrame(format);
      tokens = countTokens(frame.open) + countTokens(frame.close);
      for (const record of view.skills.values()) tokens += this.tokensOf(record, format);
      costs.set(format, tokens);
    }
    return tokens;
  }

  /** The view's skills best matching a request, best first (skills of other views are never returned). */
  search(view: CatalogueSnapshot, request: string, options: { limit?: number; context?: string; popularity?: ReadonlyMap<string, number> } = {}): RankedSkill[] {
    const include = this.holdsOnly(view) ? undefined : (position: number) => view.skills.get(this.records[position].name) === this.records[position];
    return this.ranker.rank(request, { ...options, include });
  }

  /** Views that hold every indexed skill (no personal skills elsewhere, no filter) need no check per result. */
  private readonly whole = new WeakMap<CatalogueSnapshot, boolean>();

  private holdsOnly(view: CatalogueSnapshot): boolean {
    let whole = this.whole.get(view);
    if (whole === undefined) {
      whole = view.skills.size === this.records.length && this.records.every((record) => view.skills.get(record.name) === record);
      this.whole.set(view, whole);
    }
    return whole;
  }

  /** Terms the index holds (for benchmarks). */
  get vocabularySize(): number {
    return this.ranker.vocabulary.size;
  }
}

/**
 * Entries counted before, by their rendered text: a reload rebuilds the snapshot from new records,
 * mostly of skills whose entries have not changed. Cleared when it grows past what any catalogue holds.
 */
const counted = new Map<string, number>();
const COUNTED_LIMIT = 50_000;

/** Tokens of one entry as rendered, plus its separator (the first entry has none: the sum is an upper bound). */
function entryCost(record: SkillRecord, format: CatalogueFormat, includeLocation: boolean): number {
  const entry = renderEntry(entryOf(record), format, includeLocation);
  let tokens = counted.get(entry);
  if (tokens === undefined) {
    tokens = countTokens(entry) + countTokens(catalogueFrame(format).separator);
    if (counted.size >= COUNTED_LIMIT) counted.clear();
    counted.set(entry, tokens);
  }
  return tokens;
}

/** Whether every skill of the view fits the limits: then every turn lists them all, the same bytes. */
export function catalogueIsComplete(view: CatalogueSnapshot, limits: CatalogueLimits): boolean {
  return view.skills.size <= limits.maxSkills && view.index.wholeCost(view, limits.format) <= limits.budgetTokens;
}

/**
 * The catalogue for one turn. When the view's skills all fit the budget and the count, all of them
 * in name order (`view.catalogue`, identical from turn to turn). Otherwise the pinned skills, then
 * the best-ranked for the message (its last messages as weaker context), then the team's most used,
 * each entry whole or not at all, until the budget or the count is reached; a closing note says
 * how many more exist and how to find them. Pinned skills are listed even past the budget.
 */
export function chooseCatalogue(view: CatalogueSnapshot, limits: CatalogueLimits, request: CatalogueRequest): CatalogueChoice {
  const { format } = limits;
  const includeLocation = view.index.includeLocation;
  const total = view.skills.size;
  if (catalogueIsComplete(view, limits)) {
    return { text: view.catalogue(format), complete: true, listed: [...view.skills.keys()], unlisted: 0, tokens: view.index.wholeCost(view, format) };
  }
  const index = view.index;
  const closing = closingCost(format, total, request.searchable);
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
  if (chosen.length < limits.maxSkills && request.message.trim() !== '') {
    for (const match of index.search(view, request.message, { limit: limits.maxSkills, context: request.context, popularity: request.popularity })) take(view.skills.get(match.name), false);
  }
  if (chosen.length < limits.maxSkills && request.popularity !== undefined) {
    // The popularity map comes most used first (as the repository reads it).
    for (const [name, uses] of request.popularity) if (uses > 0) take(view.skills.get(name), false);
  }
  const unlisted = total - chosen.length;
  const entries: CatalogueEntry[] = chosen.map(entryOf);
  const note = { count: unlisted, note: unlistedNote(unlisted, request.searchable) };
  let text = renderListing(entries, format, includeLocation, note);
  if (entries.length === 0 && format === 'markdown') text = text.replace(/^\n/, '');
  return { text, complete: false, listed: chosen.map((record) => record.name), unlisted, tokens };
}

const closings = new Map<string, number>();

/**
 * The frame and the closing note, counted once per format, total and searchability: the note's
 * count is at most the total, so counting it with the total's digits keeps the sum an upper bound.
 */
function closingCost(format: CatalogueFormat, total: number, searchable: boolean): number {
  const key = `${format} ${total} ${searchable}`;
  let tokens = closings.get(key);
  if (tokens === undefined) {
    tokens = countTokens(catalogueFrame(format).open) + countTokens(renderUnlisted({ count: total, note: unlistedNote(total, searchable) }, format));
    if (closings.size >= 1000) closings.clear();
    closings.set(key, tokens);
  }
  return tokens;
}

function unlistedNote(count: number, searchable: boolean): string {
  const skills = count === 1 ? '1 more skill is' : `${count} more skills are`;
  return searchable
    ? `${skills} not listed here: find them with the skills_search tool when no listed skill fits the task.`
    : `${skills} not listed here; the user can invoke any skill by name.`;
}

function entryOf(record: SkillRecord): CatalogueEntry {
  return { name: record.name, description: record.description, location: record.skillFile };
}

/**
 * `metadata.triggers` (the TypeScript-agent design's keywords, verbs and phrases): a JSON list or
 * object of lists (lenient mode stores a YAML list as its JSON text), or text separated by commas,
 * semicolons or lines.
 */
export function triggersOf(record: Pick<SkillRecord, 'frontmatter'>): string[] | undefined {
  const raw = record.frontmatter.metadata?.triggers;
  if (typeof raw !== 'string' || raw.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = raw.split(/[,;\n]+/);
  }
  // Walked without recursion and cut at MAX_TRIGGERS: a skill's metadata may nest or repeat without end.
  const found: string[] = [];
  const pending: unknown[] = [parsed];
  while (pending.length > 0 && found.length < MAX_TRIGGERS) {
    const value = pending.pop();
    if (typeof value === 'string') {
      const trigger = value.trim();
      if (trigger !== '') found.push(trigger.slice(0, MAX_TRIGGER_CHARS));
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) pending.push(value[i]);
    } else if (value !== null && typeof value === 'object') {
      const values = Object.values(value);
      for (let i = values.length - 1; i >= 0; i--) pending.push(values[i]);
    }
  }
  return found.length === 0 ? undefined : found;
}

/** The most triggers a skill is indexed with, and the longest one. */
const MAX_TRIGGERS = 100;
const MAX_TRIGGER_CHARS = 200;
