import { Inject, Injectable, Logger, type OnModuleInit, Optional } from '@nestjs/common';
import { AppError, ErrorCode, skillsDisabledError } from '../common/app-error.js';
import { APP_CONFIG, type AppConfig, type SkillDirectory, type SkillsConfig } from '../config/app-config.js';
import { MetricsService } from '../ops/metrics.service.js';
import { buildSnapshot, type CatalogueSnapshot, findSkill } from './catalogue-snapshot.js';
import { type CommandDiscoveryResult, discoverCommands } from './commands/command-discovery.js';
import { mergeProgrammaticSkills, type ProgrammaticSkill, programmaticSkillRecord } from './programmatic-skill.js';
import { type DiscoveryOptions, type DiscoveryResult, discoverSkills, discoverSkillsAsync } from './skill-discovery.js';
import type { SkillRecord, SkillScope } from './skill.types.js';
import { defaultToolNames, toolAvailability, type ToolAvailability } from './tool-requirements.js';

const SUGGESTION_LIMIT = 20;

/** What the last scan of the folders found, kept so that a registration rebuilds the snapshot without reading them again. */
interface Scan {
  result: DiscoveryResult;
  commands: CommandDiscoveryResult;
  scannedAt: Date;
  durationMs: number;
}

/**
 * Holds the current catalogue snapshot. `reload()` scans the folders and swaps the next snapshot in
 * one assignment; `register`/`unregister` (programmatic skills) and `setAvailableTools` rebuild it
 * from the last scan and swap it the same way, so the catalogue changes at once and whole.
 */
@Injectable()
export class SkillRegistryService implements OnModuleInit {
  private readonly logger = new Logger(SkillRegistryService.name);
  private readonly config: SkillsConfig;
  private readonly commandDirectories: readonly SkillDirectory[];
  private readonly scriptsEnabled: boolean;
  private current: CatalogueSnapshot | undefined;
  private lastScan: Scan | undefined;
  /** By scope, then name: one programmatic skill per name and scope. */
  private readonly programmatic = new Map<SkillScope, Map<string, SkillRecord>>();
  private availability: ToolAvailability;
  private runningScan: Promise<CatalogueSnapshot> | undefined;
  private queuedScan: Promise<CatalogueSnapshot> | undefined;

  constructor(
    @Inject(APP_CONFIG) appConfig: AppConfig,
    @Optional() private readonly metrics?: MetricsService,
  ) {
    this.config = appConfig.app.skills;
    this.commandDirectories = appConfig.app.commands.directories;
    this.scriptsEnabled = appConfig.app.scripts.enabled;
    this.availability = toolAvailability(defaultToolNames(this.scriptsEnabled), this.scriptsEnabled);
  }

  /** The first scan runs straight through: nothing is served before the module is ready. */
  onModuleInit(): void {
    // With skills disabled no folder is read at all, as the specification asks.
    if (!this.config.enabled) return;
    const started = performance.now();
    const scannedAt = new Date();
    this.swapIn(discoverSkills(this.discoveryOptions()), started, scannedAt);
  }

  get enabled(): boolean {
    return this.config.enabled;
  }

  get snapshot(): CatalogueSnapshot {
    if (!this.config.enabled || this.current === undefined) {
      throw skillsDisabledError();
    }
    return this.current;
  }

  /**
   * Rescans the folders and swaps in the next snapshot. The scan gives the event loop a turn every
   * few milliseconds, so requests are served while thousands of skills are read; the snapshot in
   * use stays whole until the next one replaces it. A reload asked for while one runs is done once
   * more after it (so it sees what changed meanwhile); further asks join that one.
   */
  reload(): Promise<CatalogueSnapshot> {
    if (!this.config.enabled) return Promise.reject(skillsDisabledError());
    if (this.queuedScan !== undefined) return this.queuedScan;
    if (this.runningScan === undefined) return this.startScan();
    this.queuedScan = this.runningScan.then(
      () => this.startScan(),
      () => this.startScan(),
    );
    return this.queuedScan;
  }

  private startScan(): Promise<CatalogueSnapshot> {
    this.queuedScan = undefined;
    const scan = this.scan().finally(() => {
      if (this.runningScan === scan) this.runningScan = undefined;
    });
    this.runningScan = scan;
    return scan;
  }

  private async scan(): Promise<CatalogueSnapshot> {
    const started = performance.now();
    const scannedAt = new Date();
    return this.swapIn(await discoverSkillsAsync(this.discoveryOptions()), started, scannedAt);
  }

  private discoveryOptions(): DiscoveryOptions {
    const { directories, codeDirectories, validation, maxDepth, maxSkills } = this.config;
    return { directories, codeDirectories, mode: validation, maxDepth, maxSkills };
  }

  /** Publishes what a scan found (with the commands, read now) as the next snapshot, and reports it. */
  private swapIn(result: DiscoveryResult, started: number, scannedAt: Date): CatalogueSnapshot {
    const commands = discoverCommands(this.commandDirectories);
    this.lastScan = { result, commands, scannedAt, durationMs: Math.round((performance.now() - started) * 100) / 100 };
    const next = this.publish(this.lastScan);
    this.metrics?.observeSkillsReload(next, Buffer.byteLength(next.catalogue(this.config.catalogueFormat)));
    this.logger.log(
      `Loaded ${next.skills.size} skill(s) in ${next.durationMs} ms (${next.invalid.length} invalid, ${next.collisions.length} collision(s), mode ${next.mode})`,
    );
    for (const warning of next.warnings) this.logger.warn(warning);
    for (const entry of next.invalid) this.logger.warn(`Invalid skill at ${entry.path}: ${entry.errors.join('; ')}`);
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
    let byName = this.programmatic.get(scope);
    if (byName === undefined) this.programmatic.set(scope, (byName = new Map()));
    const replaced = byName.has(record.name);
    byName.set(record.name, record);
    this.logger.log(`${replaced ? 'Replaced' : 'Registered'} programmatic ${record.programmatic?.execute === undefined ? 'instruction' : 'code'} skill '${record.name}' (${scope})`);
    this.republish();
    return record;
  }

  /** Removes a programmatic skill (of one scope, or of every scope); what it shadowed is offered again. False when there was none. */
  unregister(name: string, scope?: SkillScope): boolean {
    const key = name.trim().normalize('NFKC');
    let removed = false;
    for (const [skillScope, byName] of this.programmatic) {
      if (scope !== undefined && skillScope !== scope) continue;
      removed = byName.delete(key) || removed;
    }
    if (removed) {
      this.logger.log(`Unregistered programmatic skill '${key}'${scope === undefined ? '' : ` (${scope})`}`);
      this.republish();
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

  /** The next snapshot from the last scan, programmatic skills and available tools; swapped in whole. */
  private publish(scan: Scan): CatalogueSnapshot {
    const programmatic = [...this.programmatic.values()].flatMap((byName) => [...byName.values()]);
    const next = buildSnapshot(mergeProgrammaticSkills(scan.result, programmatic), this.config, { scannedAt: scan.scannedAt, durationMs: scan.durationMs }, scan.commands, this.availability);
    this.current = next;
    return next;
  }

  /** Before the first scan (or with skills off) there is nothing to rebuild: the first reload includes the change. */
  private republish(): void {
    if (this.config.enabled && this.lastScan !== undefined) this.publish(this.lastScan);
  }

  private logUnavailable(snapshot: CatalogueSnapshot): void {
    for (const entry of snapshot.unavailable) this.logger.warn(`Skill '${entry.name}' at ${entry.path} is not offered: ${entry.reason}`);
  }

  private logCommands(snapshot: CatalogueSnapshot): void {
    const report = snapshot.commandReport;
    // Quiet while no commands directory exists (the defaults usually do not).
    if (report.directories.some((directory) => directory.exists)) {
      this.logger.log(`Loaded ${snapshot.commands.size} command(s) (${report.invalid.length} invalid, ${report.collisions.length} collision(s))`);
    }
    for (const warning of report.warnings) this.logger.warn(warning);
    for (const entry of report.invalid) this.logger.warn(`Invalid command file at ${entry.path}: ${entry.errors.join('; ')}`);
  }

  /** The skill, or SKILL_NOT_FOUND naming the skills that do exist. */
  get(name: string): SkillRecord {
    const snapshot = this.snapshot;
    const skill = findSkill(snapshot.skills, name);
    if (skill !== undefined) return skill;
    const disabled = findSkill(snapshot.disabled, name);
    if (disabled !== undefined) {
      throw new AppError(ErrorCode.SKILL_DISABLED, `Skill '${disabled.name}' is switched off on this server ([app.skills] disabled); an operator can switch it on again.`, { name: disabled.name });
    }
    const available = [...snapshot.skills.keys()];
    const shown = available.slice(0, SUGGESTION_LIMIT).join(', ');
    const more = available.length > SUGGESTION_LIMIT ? `, … (${available.length - SUGGESTION_LIMIT} more)` : '';
    const unavailable = snapshot.unavailable.find((entry) => entry.name === name || entry.name === name.trim().normalize('NFKC'));
    const why = unavailable === undefined ? 'not found.' : `not offered: ${unavailable.reason}`;
    throw new AppError(
      ErrorCode.SKILL_NOT_FOUND,
      available.length === 0 ? `Skill '${name}' ${why} No skills are available.` : `Skill '${name}' ${why} Available: ${shown}${more}`,
      { name, available: available.slice(0, SUGGESTION_LIMIT) },
    );
  }
}
