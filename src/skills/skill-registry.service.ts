import { Inject, Injectable, Logger, type OnModuleInit, Optional } from '@nestjs/common';
import { AppError, ErrorCode, skillsDisabledError } from '../common/app-error.js';
import { APP_CONFIG, type AppConfig, type SkillDirectory, type SkillsConfig } from '../config/app-config.js';
import { MetricsService } from '../ops/metrics.service.js';
import { buildSnapshot, type CatalogueSnapshot, findSkill } from './catalogue-snapshot.js';
import { discoverCommands } from './commands/command-discovery.js';
import { discoverSkills } from './skill-discovery.js';
import type { SkillRecord } from './skill.types.js';

const SUGGESTION_LIMIT = 20;

/** Holds the current catalogue snapshot; `reload()` builds the next one and swaps it in one assignment. */
@Injectable()
export class SkillRegistryService implements OnModuleInit {
  private readonly logger = new Logger(SkillRegistryService.name);
  private readonly config: SkillsConfig;
  private readonly commandDirectories: readonly SkillDirectory[];
  private current: CatalogueSnapshot | undefined;

  constructor(
    @Inject(APP_CONFIG) appConfig: AppConfig,
    @Optional() private readonly metrics?: MetricsService,
  ) {
    this.config = appConfig.app.skills;
    this.commandDirectories = appConfig.app.commands.directories;
  }

  onModuleInit(): void {
    // With skills disabled no folder is read at all, as the specification asks.
    if (this.config.enabled) this.reload();
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

  reload(): CatalogueSnapshot {
    if (!this.config.enabled) {
      throw skillsDisabledError();
    }
    const started = performance.now();
    const scannedAt = new Date();
    const result = discoverSkills({
      directories: this.config.directories,
      mode: this.config.validation,
      maxDepth: this.config.maxDepth,
      maxSkills: this.config.maxSkills,
    });
    const commands = discoverCommands(this.commandDirectories);
    const next = buildSnapshot(result, this.config, { scannedAt, durationMs: Math.round((performance.now() - started) * 100) / 100 }, commands);
    this.current = next;
    this.metrics?.observeSkillsReload(next, Buffer.byteLength(next.catalogue(this.config.catalogueFormat)));
    this.logger.log(
      `Loaded ${next.skills.size} skill(s) in ${next.durationMs} ms (${next.invalid.length} invalid, ${next.collisions.length} collision(s), mode ${next.mode})`,
    );
    for (const warning of next.warnings) this.logger.warn(warning);
    for (const entry of next.invalid) this.logger.warn(`Invalid skill at ${entry.path}: ${entry.errors.join('; ')}`);
    this.logCommands(next);
    return next;
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
    const available = [...snapshot.skills.keys()];
    const shown = available.slice(0, SUGGESTION_LIMIT).join(', ');
    const more = available.length > SUGGESTION_LIMIT ? `, … (${available.length - SUGGESTION_LIMIT} more)` : '';
    throw new AppError(
      ErrorCode.SKILL_NOT_FOUND,
      available.length === 0 ? `Skill '${name}' not found. No skills are available.` : `Skill '${name}' not found. Available: ${shown}${more}`,
      { name, available: available.slice(0, SUGGESTION_LIMIT) },
    );
  }
}
