import type { CatalogueFormat } from '../options/skills-options.schema.js';
import { catalogueFrame, type CatalogueEntry, renderEntry } from './catalogue-renderer.js';
import type { SkillRecord } from '../skill/skill.types.js';
import { type RankedSkill, SkillRanker } from '../ranking/skill-ranker.js';
import { countTokens } from '../ranking/token-count.js';

/** What the index reads of a view of the catalogue (a `CatalogueSnapshot`): its skills by name. */
export interface CatalogueView {
  readonly skills: ReadonlyMap<string, SkillRecord>;
}

/**
 * The ranking side of a snapshot: an index of every skill it holds (team and personal; a view
 * filters by record) and each skill's catalogue entry size in tokens, both built once with the
 * snapshot.
 */
export class CatalogueIndex {
  /**
   * Entry sizes by format: the configured one counted at build, another (a catalogue route's `format`) on first use.
   */
  private readonly entryTokens: Map<CatalogueFormat, Map<SkillRecord, number>>;
  /** What a view's whole catalogue costs, by format, computed once per view. */
  private readonly wholeCosts = new WeakMap<CatalogueView, Map<CatalogueFormat, number>>();

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
  static *building(
    records: readonly SkillRecord[],
    format: CatalogueFormat,
    includeLocation: boolean,
  ): Generator<void, CatalogueIndex> {
    const tokens = new Map<SkillRecord, number>();
    for (let i = 0; i < records.length; i++) {
      tokens.set(records[i], entryCost(records[i], format, includeLocation));
      // runInSlices gives the loop a turn every few milliseconds: a step per few skills lets it.
      if ((i + 1) % 16 === 0) yield;
    }
    const ranker = yield* SkillRanker.building(
      records.map((record) => ({
        name: record.name,
        description: record.description,
        triggers: triggersOf(record),
        private: isPrivate(record),
      })),
    );
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
  wholeCost(view: CatalogueView, format: CatalogueFormat): number {
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
  search(
    view: CatalogueView,
    request: string,
    options: { limit?: number; context?: string; popularity?: ReadonlyMap<string, number> } = {},
  ): RankedSkill[] {
    const include = this.holdsOnly(view)
      ? undefined
      : (position: number) => view.skills.get(this.records[position].name) === this.records[position];
    return this.ranker.rank(request, { ...options, include, privateSkills: this.privateOf(view) });
  }

  private readonly privates = new WeakMap<CatalogueView, number[]>();

  /** The positions of the private skills a view holds (its owner's, its groups'). */
  private privateOf(view: CatalogueView): number[] {
    let positions = this.privates.get(view);
    if (positions === undefined) {
      positions = [];
      for (let i = 0; i < this.records.length; i++) {
        if (isPrivate(this.records[i]) && view.skills.get(this.records[i].name) === this.records[i]) positions.push(i);
      }
      this.privates.set(view, positions);
    }
    return positions;
  }

  /** Views that hold every indexed skill (no personal skills elsewhere, no filter) need no check per result. */
  private readonly whole = new WeakMap<CatalogueView, boolean>();

  private holdsOnly(view: CatalogueView): boolean {
    let whole = this.whole.get(view);
    if (whole === undefined) {
      whole =
        view.skills.size === this.records.length &&
        this.records.every((record) => view.skills.get(record.name) === record);
      this.whole.set(view, whole);
    }
    return whole;
  }

  /** Terms the index holds, and its serialised size (for benchmarks). */
  get vocabularySize(): number {
    return this.ranker.vocabulary.size;
  }

  serializedBytes(): number {
    return this.ranker.serializedBytes();
  }
}

/**
 * Tokens of one entry as rendered, plus its separator (the first entry has none: the sum is an upper
 * bound). A reload rebuilds the snapshot from new records, mostly of unchanged entries: countTokens
 * counts each distinct text once.
 */
function entryCost(record: SkillRecord, format: CatalogueFormat, includeLocation: boolean): number {
  return (
    countTokens(renderEntry(entryOf(record), format, includeLocation)) + countTokens(catalogueFrame(format).separator)
  );
}

/** A skill as the catalogue lists it. */
export function entryOf(record: SkillRecord): CatalogueEntry {
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

/** A skill only some views hold: a user's personal one, or one shared with groups. */
function isPrivate(record: SkillRecord): boolean {
  return record.store?.scope === 'personal' || record.store?.groups !== undefined;
}
