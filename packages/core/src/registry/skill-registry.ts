import { AppError, ErrorCode, skillsDisabledError } from '../errors/app-error.js';
import type { SkillDirectory } from '../options/setting.js';
import type { SkillsConfig } from '../options/skills-config.js';
import type { SkillStoreReader } from '../store/skill-store-reader.js';
import { SILENT_LOGGER, type SkillsLogger } from './skills-logger.js';
import type { SkillsMetrics } from './skills-metrics.js';
import type { SkillsSettings } from './skills-settings.js';
import {
  buildSnapshot,
  buildSnapshotAsync,
  type CatalogueSnapshot,
  findSkill,
  holdsGroupSkillsFor,
  narrowSnapshot,
  type SkillFilter,
  type SnapshotInputs,
} from '../catalogue/catalogue-snapshot.js';
import { type CommandDiscoveryResult, discoverCommands } from '../commands/command-discovery.js';
import { type ProgrammaticSkill, programmaticSkillRecord } from '../skill/programmatic-skill.js';
import type { SkillRecord, SkillScope } from '../skill/skill.types.js';
import { defaultToolNames, toolAvailability, type ToolAvailability } from '../skill/tool-requirements.js';
import { FolderSource } from '../sources/folder-source.js';
import { ProgrammaticSource } from '../sources/programmatic-source.js';
import {
  mergeSources,
  type SkillSource,
  type SkillSourceContent,
  type SkillSourceLoad,
} from '../sources/skill-source.js';
import { StoreSource } from '../sources/store-source.js';

const SUGGESTION_LIMIT = 20;
const NO_FILTERS: readonly SkillFilter[] = [];
const NO_GROUPS: ReadonlySet<string> = new Set();
/**
 * Views (a user's personal skills and filters over the snapshot) kept per snapshot; past this many the cache starts
 * again.
 */
const MAX_CACHED_VIEWS = 200;
/** What a source holds before it was first read. */
const NOTHING_READ: SkillSourceContent = Object.freeze({ skills: [] });

/** What changed between two snapshots' catalogues, by content digest. */
export interface CatalogueDiff {
  added: { name: string; digest: string | null; source: string }[];
  removed: { name: string; digest: string | null; source: string }[];
  changed: { name: string; oldDigest: string | null; newDigest: string | null; source: string }[];
  unchanged: number;
}

/**
 * What the last scan of the folders found besides skills (the commands) and when, kept so that a
 * registration rebuilds the snapshot without reading them again.
 */
interface Scan {
  commands: CommandDiscoveryResult;
  scannedAt: Date;
  durationMs: number;
}

/**
 * Holds the current catalogue snapshot, merged from its sources (see `SkillSource`): the skill
 * folders, the app's own sources, the programmatic skills, and the store when there is one.
 * `reload()` reads them all again and swaps the next snapshot in one assignment; `register`/
 * `unregister` and `setAvailableTools` rebuild it from what the sources last held and swap it the
 * same way, so the catalogue changes at once and whole.
 */
export class SkillRegistry {
  private readonly config: SkillsConfig;
  private readonly commandDirectories: readonly SkillDirectory[];
  private readonly scriptsEnabled: boolean;
  /** What this registry was built with (the tool style and catalogue limits a caller's tools and prompts follow). */
  readonly settings: SkillsSettings;
  /** In list order, the order of the merge: folders, the app's sources, programmatic skills, the store. */
  private readonly sources: readonly SkillSource[];
  private readonly programmatic = new ProgrammaticSource();
  private readonly storeSource: StoreSource | undefined;
  /** What each source held when last read (the programmatic one: now). */
  private readonly contents = new Map<SkillSource, SkillSourceContent>();
  private current: CatalogueSnapshot | undefined;
  private lastScan: Scan | undefined;
  private availability: ToolAvailability;
  private running: Promise<CatalogueSnapshot> | undefined;
  private queued: { promise: Promise<CatalogueSnapshot>; full: boolean } | undefined;
  private views = new Map<string, CatalogueSnapshot>();
  private viewsOf: CatalogueSnapshot | undefined;
  /**
   * The store generation the current snapshot was built from (read before its contents), and the reload generation of
   * its last scan.
   */
  private loaded = { generation: '', reloadGeneration: '' };
  /** Operators' reloads under way, from before they ask the others. */
  private readonly requests = new Set<Promise<unknown>>();
  /** Counts registrations and changes of tools, which a snapshot built in slices must not miss. */
  private inputsChanged = 0;
  private readonly swapListeners = new Set<(snapshot: CatalogueSnapshot) => void>();

  /**
   * `sources`: an app's own (its database, say), merged after the folders and before the
   * programmatic skills and the store; each has its `precedence`.
   */
  constructor(
    settings: SkillsSettings,
    private readonly metrics?: SkillsMetrics,
    private readonly store?: SkillStoreReader,
    private readonly logger: SkillsLogger = SILENT_LOGGER,
    sources: readonly SkillSource[] = [],
  ) {
    this.settings = settings;
    this.config = settings.skills;
    this.commandDirectories = settings.commandDirectories;
    this.scriptsEnabled = settings.scriptsEnabled;
    this.availability = toolAvailability(defaultToolNames(this.scriptsEnabled), this.scriptsEnabled);
    this.storeSource = store === undefined ? undefined : new StoreSource(store, this.config);
    this.sources = [
      new FolderSource(this.config),
      ...sources,
      this.programmatic,
      ...(this.storeSource === undefined ? [] : [this.storeSource]),
    ];
  }

  /** The first read runs straight through: nothing is served before this is done. */
  init(): Promise<void> | void {
    // With skills disabled no folder is read at all, as the specification asks.
    if (!this.config.enabled) return;
    // Without a store (a registry built alone) and with sources that answer at once, this is done before it returns.
    if (this.store === undefined) return this.firstRead();
    return this.store.generations().then(async (generations) => {
      await this.firstRead();
      this.loaded = generations;
    });
  }

  private firstRead(): Promise<void> | void {
    const started = performance.now();
    const scannedAt = new Date();
    const publish = () => void this.reportSwap(this.publish(this.recordScan(started, scannedAt)), 'start-up');
    const reading = this.read(this.sources, 'start-up');
    return reading === undefined ? publish() : reading.then(publish);
  }

  /**
   * Reads `sources` in order, then puts what they gave into `contents` at once: a source that fails leaves every
   * source's contents as they were (a later swap publishes none of this read). A promise only from the first source
   * that answers with one.
   */
  private read(
    sources: readonly SkillSource[],
    when: SkillSourceLoad,
    into = new Map<SkillSource, SkillSourceContent>(),
  ): Promise<void> | undefined {
    for (const [index, source] of sources.entries()) {
      const failed = (error: unknown): never => {
        this.logger.error(`Skill source '${source.name}' could not be read: ${(error as Error)?.message ?? error}`);
        throw error;
      };
      let content: ReturnType<SkillSource['load']>;
      try {
        content = source.load(when);
      } catch (error) {
        return failed(error);
      }
      if (isPromiseLike(content))
        return Promise.resolve(content).then((read) => {
          into.set(source, read);
          return this.read(sources.slice(index + 1), when, into);
        }, failed);
      into.set(source, content);
    }
    for (const [source, content] of into) this.contents.set(source, content);
    return undefined;
  }

  /** Resolves once no reload or store read is running or queued (whether they succeeded or not). */
  async settled(): Promise<void> {
    while (this.busy) {
      await (this.queued?.promise ?? this.running ?? this.requests.values().next().value)?.catch(() => undefined);
    }
  }

  /** Whether a reload, a store read or an operator's reload (still asking the others) is running or queued. */
  get busy(): boolean {
    return this.running !== undefined || this.queued !== undefined || this.requests.size > 0;
  }

  /**
   * The store generation and reload generation the catalogue reflects (sync compares them with the
   * database's once nothing is `busy`: a reload that failed is asked for again, since its
   * generations were never applied).
   */
  get loadedGenerations(): { generation: string; reloadGeneration: string } {
    return { ...this.loaded };
  }

  get enabled(): boolean {
    return this.config.enabled;
  }

  /**
   * Whether the configuration (`[app.skills] disabled`) switches this skill off: the persisted switch cannot override
   * it.
   */
  configDisabled(name: string): boolean {
    return this.config.disabled.includes(name);
  }

  get snapshot(): CatalogueSnapshot {
    if (!this.config.enabled || this.current === undefined) {
      throw skillsDisabledError();
    }
    return this.current;
  }

  /**
   * Reads every source again (rescans the folders, reads the store and an app's own sources) and
   * swaps in the next snapshot. The scan gives the event loop a turn every few milliseconds, so
   * requests are served while thousands of skills are read; the snapshot in use stays whole until
   * the next one replaces it. A reload asked for while one runs is done once more after it (so it
   * sees what changed meanwhile); further asks join that one.
   */
  reload(): Promise<CatalogueSnapshot> {
    return this.schedule(true);
  }

  /**
   * A reload asked for by an operator: this instance rescans and answers what changed; the others
   * on the same database are asked (through the store) and rescan within seconds.
   */
  reloadEverywhere(): Promise<{ snapshot: CatalogueSnapshot; diff: CatalogueDiff }> {
    // Counted from its first step: a sync check that reads the database while this asks (its bump
    // seen before the reload is marked as under way) waits for it instead of asking again.
    const work = this.reloadEverywhereNow();
    const request = work.catch(() => undefined);
    this.requests.add(request);
    void request.finally(() => this.requests.delete(request));
    return work;
  }

  private async reloadEverywhereNow(): Promise<{ snapshot: CatalogueSnapshot; diff: CatalogueDiff }> {
    const before = this.snapshot;
    // Asked first, so this instance's own scan (which reads the bumped generation) counts as the
    // reload the others are asked for; a sync check meanwhile waits for it (see `requests`).
    await this.store?.requestReload();
    const snapshot = await this.reload();
    return { snapshot, diff: await diffCatalogues(before, snapshot) };
  }

  /**
   * Reads the store again (an install, rollback, uninstall or switch, here or on another instance) without rescanning
   * the folders.
   */
  refreshStore(): Promise<CatalogueSnapshot> {
    if (this.store === undefined) return Promise.resolve(this.snapshot);
    return this.schedule(false);
  }

  private schedule(full: boolean): Promise<CatalogueSnapshot> {
    if (!this.config.enabled) return Promise.reject(skillsDisabledError());
    if (this.queued !== undefined) {
      this.queued.full ||= full;
      return this.queued.promise;
    }
    if (this.running === undefined) return this.start(full);
    const queued = { full, promise: undefined as unknown as Promise<CatalogueSnapshot> };
    const next = () => this.start(queued.full);
    queued.promise = this.running.then(next, next);
    this.queued = queued;
    return queued.promise;
  }

  private start(full: boolean): Promise<CatalogueSnapshot> {
    this.queued = undefined;
    const work = (full ? this.scan() : this.rereadStore()).finally(() => {
      if (this.running === work) this.running = undefined;
    });
    this.running = work;
    return work;
  }

  /** Reads every source again (the folders with the commands) and swaps in what they hold, built in slices. */
  private async scan(): Promise<CatalogueSnapshot> {
    const started = performance.now();
    const scannedAt = new Date();
    const generations = await this.store?.generations();
    await this.read(this.sources, 'reload');
    const next = this.reportSwap(await this.publishInSlices(this.recordScan(started, scannedAt)));
    // Counted as loaded only once the catalogue has them: a failed reload is asked for again.
    if (generations !== undefined) this.loaded = generations;
    return next;
  }

  private async rereadStore(): Promise<CatalogueSnapshot> {
    const { generation } = await this.store!.generations();
    await this.read([this.storeSource!], 'reload');
    if (this.lastScan === undefined) return this.snapshot;
    const next = await this.publishInSlices(this.lastScan);
    const read = this.contents.get(this.storeSource!) ?? NOTHING_READ;
    this.logger.log(
      `Store read (generation ${generation}): ${read.skills.length} shared, ` +
        `${read.personal?.length ?? 0} personal skill(s)`,
    );
    this.loaded = { generation, reloadGeneration: this.loaded.reloadGeneration };
    return next;
  }

  /** The commands (read with every scan of the folders) and the scan's timing. */
  private recordScan(started: number, scannedAt: Date): Scan {
    const commands = discoverCommands(this.commandDirectories);
    this.lastScan = { commands, scannedAt, durationMs: Math.round((performance.now() - started) * 100) / 100 };
    return this.lastScan;
  }

  /**
   * Logs what a scan loaded. At start-up the server's summary counts the skills and the invalid
   * ones (and says where to see why), so the details are debug lines there; a reload's are news.
   */
  private reportSwap(next: CatalogueSnapshot, when: 'start-up' | 'reload' = 'reload'): CatalogueSnapshot {
    this.metrics?.observeSkillsReload(next, () => Buffer.byteLength(next.catalogue(this.config.catalogueFormat)));
    const detail = when === 'start-up' ? this.logger.debug.bind(this.logger) : this.logger.log.bind(this.logger);
    detail(
      `Loaded ${next.skills.size} skill(s) in ${next.durationMs} ms (${next.invalid.length} invalid, ` +
        `${next.collisions.length} collision(s), mode ${next.mode})`,
    );
    for (const warning of next.warnings) this.logger.warn(warning);
    const invalid = when === 'start-up' ? this.logger.debug.bind(this.logger) : this.logger.warn.bind(this.logger);
    for (const entry of next.invalid) invalid(`Invalid skill at ${entry.path}: ${entry.errors.join('; ')}`);
    this.logUnavailable(next);
    this.logCommands(next);
    return next;
  }

  /**
   * Adds a skill of the embedding application (an instruction skill, a code skill, or both) and
   * swaps in a snapshot that has it. A higher scope wins a name clash (bundled < user < workspace;
   * folder skills are `user`; at the same scope the programmatic skill wins); registering a name
   * again at the same scope replaces it. Invalid input is VALIDATION_FAILED naming every problem.
   */
  register(skill: ProgrammaticSkill, scope: SkillScope = 'workspace'): SkillRecord {
    const record = programmaticSkillRecord(skill, scope);
    const replaced = this.programmatic.add(record);
    this.logger.log(
      `${replaced ? 'Replaced' : 'Registered'} programmatic ` +
        `${record.programmatic?.execute === undefined ? 'instruction' : 'code'} skill '${record.name}' (${scope})`,
    );
    this.programmaticChanged();
    return record;
  }

  /**
   * Removes a programmatic skill (of one scope, or of every scope); what it shadowed is offered again. False when there
   * was none.
   */
  unregister(name: string, scope?: SkillScope): boolean {
    const key = name.trim().normalize('NFKC');
    const removed = this.programmatic.remove(key, scope);
    if (removed) {
      this.logger.log(`Unregistered programmatic skill '${key}'${scope === undefined ? '' : ` (${scope})`}`);
      this.programmaticChanged();
    }
    return removed;
  }

  /**
   * The tools the chats of this server have (canonical or wire names), replacing the default: the
   * skill tools of every style, and `skills.runScript`, `bash` and `shell` while scripts are on. A
   * skill whose `tools_required` names another tool is left out of the catalogue.
   */
  setAvailableTools(names: Iterable<string>): void {
    this.availability = toolAvailability(names, this.scriptsEnabled);
    this.republish();
  }

  /** The next snapshot from what the sources hold, the last scan's commands and the tools; swapped in whole. */
  private publish(scan: Scan): CatalogueSnapshot {
    return this.adopt(buildSnapshot(...this.snapshotInputs(scan)));
  }

  /**
   * The same, built in slices. A registration (or a change of tools) while it is built publishes at
   * once from the same scan, so it is built again, whole, rather than swapped in without it.
   */
  private async publishInSlices(scan: Scan): Promise<CatalogueSnapshot> {
    const inputsAt = this.inputsChanged;
    const next = await buildSnapshotAsync(...this.snapshotInputs(scan));
    if (this.inputsChanged !== inputsAt) return this.publish(scan);
    return this.adopt(next);
  }

  /** Makes `next` the current snapshot and tells whoever follows the catalogue (the MCP endpoint's sessions). */
  private adopt(next: CatalogueSnapshot): CatalogueSnapshot {
    this.current = next;
    for (const listener of this.swapListeners) {
      try {
        listener(next);
      } catch (error) {
        this.logger.error(`A catalogue listener failed: ${(error as Error).message}`);
      }
    }
    return next;
  }

  /**
   * Calls `listener` after every swap of the snapshot (a reload, an install, a switch, a registration); returns how to
   * stop.
   */
  onSwap(listener: (snapshot: CatalogueSnapshot) => void): () => void {
    this.swapListeners.add(listener);
    return () => this.swapListeners.delete(listener);
  }

  private snapshotInputs(scan: Scan): SnapshotInputs {
    const merged = mergeSources(this.sources.map((source) => [source, this.contents.get(source) ?? NOTHING_READ]));
    return [
      merged,
      this.config,
      { scannedAt: scan.scannedAt, durationMs: scan.durationMs },
      scan.commands,
      this.availability,
      merged,
    ];
  }

  private programmaticChanged(): void {
    this.contents.set(this.programmatic, this.programmatic.load());
    this.republish();
  }

  /** Before the first read (or with skills off) there is nothing to rebuild: the first read includes the change. */
  private republish(): void {
    this.inputsChanged++;
    if (this.config.enabled && this.lastScan !== undefined) this.publish(this.lastScan);
  }

  private logUnavailable(snapshot: CatalogueSnapshot): void {
    for (const entry of snapshot.unavailable)
      this.logger.warn(`Skill '${entry.name}' at ${entry.path} is not offered: ${entry.reason}`);
  }

  private logCommands(snapshot: CatalogueSnapshot): void {
    const report = snapshot.commandReport;
    // Quiet while no commands directory exists (the defaults usually do not).
    if (report.directories.some((directory) => directory.exists)) {
      this.logger.log(
        `Loaded ${snapshot.commands.size} command(s) (${report.invalid.length} invalid, ` +
          `${report.collisions.length} collision(s))`,
      );
    }
    for (const warning of report.warnings) this.logger.warn(warning);
    for (const entry of report.invalid)
      this.logger.warn(`Invalid command file at ${entry.path}: ${entry.errors.join('; ')}`);
  }

  /**
   * What one user sees (in one chat): the snapshot with the user's personal skills, narrowed by
   * the user's and the chat's filters. The same object for the same inputs until the next swap,
   * so what is derived from a snapshot (tool definitions, the list's JSON) is derived once.
   */
  viewFor(
    ownerId: string | undefined,
    filters: readonly (SkillFilter | null | undefined)[] = NO_FILTERS,
    groups: readonly string[] = [],
  ): CatalogueSnapshot {
    const base = this.snapshot;
    // Every request of every door asks for a view: the common case (no filters, no groups) allocates nothing.
    const applied =
      filters.length === 0
        ? NO_FILTERS
        : filters.filter((filter): filter is SkillFilter => filter !== null && filter !== undefined);
    const memberOf = groups.length === 0 ? NO_GROUPS : new Set(groups);
    const hasGroupSkills = holdsGroupSkillsFor(base, memberOf);
    if ((ownerId === undefined || !base.personal.has(ownerId)) && applied.length === 0 && !hasGroupSkills) return base;
    if (this.viewsOf !== base || this.views.size >= MAX_CACHED_VIEWS) {
      this.views = new Map();
      this.viewsOf = base;
    }
    const key = JSON.stringify([ownerId ?? null, applied, hasGroupSkills ? [...memberOf].sort() : []]);
    let view = this.views.get(key);
    if (view === undefined) {
      view = narrowSnapshot(base, ownerId, applied, this.config, hasGroupSkills ? memberOf : undefined);
      this.views.set(key, view);
    }
    return view;
  }

  /**
   * What a new chat of the user may use (and MCP and the discovery index serve): the team's skills, the ones shared
   * with the user's groups and the user's own, narrowed by the user's filter.
   */
  async viewForUser(userId: string): Promise<CatalogueSnapshot> {
    const [filter, groups] = await Promise.all([this.store?.userFilter(userId), this.userGroups(userId)]);
    return this.viewFor(userId, [filter], groups);
  }

  /**
   * The user's view narrowed by `filters` only (not the user's own filter unless given): the team's skills, the ones
   * shared with the user's groups and the user's own. Every door that shows a person skills builds it here or in
   * `viewForUser`, so a skill shared with groups reaches their members and nobody else.
   */
  async userView(
    userId: string,
    filters: readonly (SkillFilter | null | undefined)[] = [],
  ): Promise<CatalogueSnapshot> {
    return this.userViewNow(userId, filters);
  }

  /**
   * `userView` for a request's hot path: the view itself while no skill is shared with groups (nearly always), and
   * a promise only when the user's groups must be asked.
   */
  userViewNow(
    userId: string,
    filters: readonly (SkillFilter | null | undefined)[] = NO_FILTERS,
  ): CatalogueSnapshot | Promise<CatalogueSnapshot> {
    if (!this.viewsNeedGroups()) return this.viewFor(userId, filters);
    return this.userGroups(userId).then((groups) => this.viewFor(userId, filters, groups));
  }

  /**
   * The groups the user is in (none without a store, or a store that has no groups). Not asked while no skill is
   * shared with groups: membership then changes no view, and the skills API keeps working without the database.
   */
  async userGroups(userId: string): Promise<readonly string[]> {
    if (!this.viewsNeedGroups()) return [];
    return (await this.store?.userGroups?.(userId)) ?? [];
  }

  /** Whether some skill (offered, switched off or unavailable) is shared with groups only. */
  private viewsNeedGroups(): boolean {
    const { groupOnly } = this.snapshot;
    return groupOnly.skills.length > 0 || groupOnly.disabled.length > 0 || groupOnly.unavailable.length > 0;
  }

  /**
   * The skill, or SKILL_NOT_FOUND naming the skills that do exist (in `view`, a user's view; default the whole
   * catalogue).
   */
  get(name: string, view: CatalogueSnapshot = this.snapshot): SkillRecord {
    const skill = findSkill(view.skills, name);
    if (skill !== undefined) return skill;
    const disabled = findSkill(view.disabled, name);
    if (disabled !== undefined) {
      // Without a store this is an app embedding Skillhost, whose `disabled` option switched it off.
      if (this.store === undefined)
        throw new AppError(
          ErrorCode.SKILL_DISABLED,
          `Skill '${disabled.name}' is switched off (the SkillsModule option \`disabled\`).`,
          { name: disabled.name },
        );
      const how = this.configDisabled(disabled.name) ? '[app.skills] disabled' : 'by an admin';
      throw new AppError(
        ErrorCode.SKILL_DISABLED,
        `Skill '${disabled.name}' is switched off on this server (${how}); an operator can switch it on again.`,
        { name: disabled.name },
      );
    }
    const available = [...view.skills.keys()];
    const shown = available.slice(0, SUGGESTION_LIMIT).join(', ');
    const more = available.length > SUGGESTION_LIMIT ? `, … (${available.length - SUGGESTION_LIMIT} more)` : '';
    const key = name.trim().normalize('NFKC');
    const unavailable = view.unavailable.find((entry) => entry.name === name || entry.name === key);
    const why = view.filteredOut.has(key)
      ? "not offered here: this user's or chat's skill filter leaves it out."
      : unavailable === undefined
        ? 'not found.'
        : `not offered: ${unavailable.reason}`;
    throw new AppError(
      ErrorCode.SKILL_NOT_FOUND,
      available.length === 0
        ? `Skill '${name}' ${why} No skills are available.`
        : `Skill '${name}' ${why} Available: ${shown}${more}`,
      { name, available: available.slice(0, SUGGESTION_LIMIT) },
    );
  }
}

/**
 * What a reload changed in the catalogue: skills by name, compared by content digest; a turn of the event loop every
 * few thousand.
 */
export async function diffCatalogues(
  before: CatalogueSnapshot | undefined,
  after: CatalogueSnapshot,
): Promise<CatalogueDiff> {
  const diff: CatalogueDiff = { added: [], removed: [], changed: [], unchanged: 0 };
  const old = before?.skills ?? new Map<string, SkillRecord>();
  let count = 0;
  const breathe = async () => {
    if (++count % DIFF_SLICE === 0) await new Promise<void>((resolve) => setImmediate(resolve));
  };
  for (const [name, skill] of after.skills) {
    const previous = old.get(name);
    if (previous === undefined) diff.added.push({ name, digest: skill.digest ?? null, source: skill.source });
    else if (previous.digest !== skill.digest || previous.path !== skill.path)
      diff.changed.push({
        name,
        oldDigest: previous.digest ?? null,
        newDigest: skill.digest ?? null,
        source: skill.source,
      });
    else diff.unchanged++;
    await breathe();
  }
  for (const [name, skill] of old) {
    if (!after.skills.has(name)) diff.removed.push({ name, digest: skill.digest ?? null, source: skill.source });
    await breathe();
  }
  return diff;
}

const DIFF_SLICE = 2_000;

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as Partial<PromiseLike<T>>)?.then === 'function';
}
