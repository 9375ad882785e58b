import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
  Optional,
} from '@nestjs/common';
import { AppError, ConfigError, ErrorCode } from '@skillhost/core';
import { SkillRegistryService } from '@skillhost/nest';
import { APP_CONFIG, type AppConfig } from '../../../config/app-config.js';
import { MIRROR_NAME } from '../../../config/config-schema.js';
import { PROCESS_ROLE, type ProcessRole } from '../../../config/process-role.js';
import {
  formatMirrorInterval,
  MAX_MIRROR_SECONDS,
  MIN_MIRROR_SECONDS,
  mirrorIntervalSeconds,
} from './mirror-interval.js';
import type { ImportResult } from './skill-import.service.js';
import { SkillImportService } from './skill-import.service.js';
import { parseImportSource } from './skill-import-source.js';
import {
  type MirrorOutcome,
  type MirrorRunResult,
  SKILL_MIRROR_STORE,
  type SkillMirrorStore,
  type StoredMirror,
} from './skill-mirror-store.js';

/** How often the owning process looks for a mirror that is due (a cheap query; the intervals are minutes). */
const TICK_MS = 15_000;
/** How long a run holds its mirror: past the import's own timeouts, so only a dead process's lease runs out. */
const LEASE_SECONDS = 600;
/** How often a run asked for waits to claim a mirror another run holds. */
const CLAIM_RETRY_MS = 250;

/** A mirror as the admin view shows it. */
export interface MirrorView extends Omit<StoredMirror, 'intervalSeconds' | 'createdBy'> {
  interval: string;
  intervalSeconds: number;
  /** A mirror from the configuration: the API cannot remove it. */
  readOnly: boolean;
}

export interface AddMirror {
  name: string;
  source: string;
  interval?: string;
}

/**
 * Mirrors keep shared skills up to date from where they are published: every interval a mirror imports its source
 * again, as `POST /v1/admin/skills/import` would. A new commit or index digest is a new version, the same content
 * none; a skill an admin rolled back to an earlier version is kept there. A failed run is logged and recorded (the
 * admin view shows it) and changes nothing, so the last good version keeps serving. Each run claims its mirror in
 * PostgreSQL first, so processes and instances on one database never run the same mirror at once.
 */
@Injectable()
export class SkillMirrorService implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('SkillMirrors');
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  /** Whether this process still has the configuration's mirrors to write. */
  private configuredPending = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SKILL_MIRROR_STORE) private readonly mirrors: SkillMirrorStore,
    private readonly importer: SkillImportService,
    /** Absent in a process without a catalogue (the CLI): servers on the database hear of installs through it. */
    @Optional() private readonly registry?: SkillRegistryService,
    @Optional() @Inject(PROCESS_ROLE) private readonly role?: ProcessRole,
  ) {}

  /**
   * The server refuses to start with a configured mirror whose source no run could read: the configuration loader
   * checks the table's keys and interval, but the source's grammar is the importer's, which the configuration may not
   * import.
   */
  onModuleInit(): void {
    const problems = configuredMirrorProblems(this.config);
    if (problems.length > 0) throw new ConfigError(problems);
  }

  /**
   * Every process looks for due mirrors: the claim in PostgreSQL decides which one runs each, and a worker restarted
   * after a crash (a new cluster id, so no longer the first) would otherwise leave the schedule to nobody. The
   * configuration's mirrors are written once, by the process that does the start-up work.
   */
  async onApplicationBootstrap(): Promise<void> {
    // A command that builds the server's services (skillhost eval --level model) runs no mirror.
    if (!this.config.app.skills.enabled || this.role?.runsBackgroundWork === false) return;
    this.configuredPending = this.role?.runsStartupTasks !== false;
    await this.writeConfigured();
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    this.timer.unref();
  }

  /** Writes the configuration's mirrors; on failure (the database away) the next tick tries again. */
  private async writeConfigured(): Promise<void> {
    if (!this.configuredPending) return;
    const configured = Object.values(this.config.app.skills.mirrors).map((mirror) => ({
      name: mirror.name,
      source: mirror.source,
      intervalSeconds: mirror.intervalMs / 1000,
    }));
    try {
      await this.mirrors.replaceConfigured(configured);
      this.configuredPending = false;
    } catch (error) {
      this.logger.warn(`Could not record the configured mirrors: ${messageOf(error)}; trying again shortly`);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    await this.ticking;
  }

  async list(): Promise<MirrorView[]> {
    return (await this.mirrors.list()).map(viewOf);
  }

  async add(mirror: AddMirror, by: string | null): Promise<MirrorView> {
    const input = checkedMirror(mirror);
    const added = await this.mirrors.add(input, by);
    if (added === null)
      throw new AppError(
        ErrorCode.SKILL_MIRROR_NAME_TAKEN,
        `A mirror named '${input.name}' exists already; remove it first (DELETE /v1/admin/skills/mirrors/` +
          `${input.name}) or choose another name.`,
        { name: input.name },
      );
    this.logger.log(
      `Added mirror '${added.name}' of ${added.source}, every ${formatMirrorInterval(input.intervalSeconds)}`,
    );
    return viewOf(added);
  }

  async remove(name: string): Promise<void> {
    const found = await this.found(name);
    if (found.origin === 'config')
      throw new AppError(
        ErrorCode.SKILL_MIRROR_CONFIGURED,
        `Mirror '${name}' is defined in the configuration ([app.skills.mirrors.${name}]); remove it there and restart.`,
        { name },
      );
    if (!(await this.mirrors.remove(name, 'api'))) throw await this.notFound(name);
    this.logger.log(`Removed mirror '${name}'`);
  }

  /**
   * Runs a mirror now and answers its state after. A run of it under way already (the schedule's, or another
   * instance's) began before the caller asked, so it is waited for and then a run of its own made.
   */
  async runNow(name: string): Promise<MirrorView> {
    const known = (await this.found(name)).name;
    let claimed = await this.mirrors.claim(known, LEASE_SECONDS);
    for (let waited = 0; claimed === null && waited < LEASE_SECONDS * 1000; waited += CLAIM_RETRY_MS) {
      await new Promise((resolve) => setTimeout(resolve, CLAIM_RETRY_MS));
      claimed = await this.mirrors.claim((await this.found(known)).name, LEASE_SECONDS);
    }
    if (claimed !== null) await this.run(claimed);
    return viewOf(await this.found(known));
  }

  /** Runs every mirror that is due, one after the other; one tick at a time. */
  tick(): Promise<void> {
    this.ticking ??= this.runDue().finally(() => {
      this.ticking = undefined;
    });
    return this.ticking;
  }

  private async runDue(): Promise<void> {
    await this.writeConfigured();
    try {
      for (;;) {
        if (this.timer === undefined) return;
        const claimed = await this.mirrors.claim(undefined, LEASE_SECONDS);
        if (claimed === null) return;
        await this.run(claimed);
      }
    } catch (error) {
      this.logger.warn(`Could not look for due mirrors: ${messageOf(error)}`);
    }
  }

  /** One run of a claimed mirror: import, read the store back into the catalogue, record the outcome. */
  private async run(mirror: StoredMirror): Promise<void> {
    let outcome: MirrorOutcome;
    try {
      const imported = await this.importer.importFrom(
        mirror.source,
        { scope: 'shared', ownerId: null, owner: null },
        null,
        // A run waits for a free import slot rather than fail: it is due, and nobody is there to retry it.
        { localFiles: true, keepRolledBack: true, waitForSlot: true },
      );
      await this.registry?.refreshStore();
      outcome = { ok: true, result: resultOf(imported) };
      this.logger.log(`Mirror '${mirror.name}': ${summaryOf(outcome.result)}`);
    } catch (error) {
      outcome = { ok: false, error: messageOf(error) };
      this.logger.warn(`Mirror '${mirror.name}' of ${mirror.source} failed: ${outcome.error}`);
    }
    await this.mirrors.finish(mirror.name, outcome);
  }

  private async found(name: string): Promise<StoredMirror> {
    const found = MIRROR_NAME.test(name) ? await this.mirrors.find(name) : null;
    if (found === null) throw await this.notFound(name);
    return found;
  }

  private async notFound(name: string): Promise<AppError> {
    const names = (await this.mirrors.list()).map((mirror) => mirror.name);
    return new AppError(
      ErrorCode.SKILL_MIRROR_NOT_FOUND,
      `No mirror named '${name.slice(0, 100)}'. Mirrors: ${names.join(', ') || 'none'}.`,
      { name: name.slice(0, 100), mirrors: names },
    );
  }
}

/** Each `[app.skills.mirrors.NAME]` whose source the importer cannot read: the table, the key and why. */
export function configuredMirrorProblems(config: AppConfig): string[] {
  return Object.values(config.app.skills.mirrors).flatMap((mirror) => {
    try {
      parseImportSource(mirror.source);
      return [];
    } catch (error) {
      return [`[app.skills.mirrors.${mirror.name}] source: ${messageOf(error)}`];
    }
  });
}

/** A new mirror's name, source and interval, each checked, or VALIDATION_FAILED naming every problem. */
function checkedMirror(mirror: AddMirror): { name: string; source: string; intervalSeconds: number } {
  const problems: string[] = [];
  if (!MIRROR_NAME.test(mirror.name))
    problems.push("name: lowercase letters, digits, '_' and '-' (1–64, a letter or digit first)");
  const source = mirror.source.trim();
  try {
    parseImportSource(source);
  } catch (error) {
    // The parser's message is a sentence of its own; the list of problems ends with one full stop.
    problems.push(`source: ${messageOf(error).replace(/\.$/, '')}`);
  }
  const interval = mirror.interval ?? '15m';
  const intervalSeconds = mirrorIntervalSeconds(interval);
  if (intervalSeconds === undefined)
    problems.push(
      `interval: '${interval.slice(0, 40)}' is not a duration from ${formatMirrorInterval(MIN_MIRROR_SECONDS)} to ` +
        `${formatMirrorInterval(MAX_MIRROR_SECONDS)}, like 15m, 2h or 1d`,
    );
  if (problems.length > 0)
    throw new AppError(ErrorCode.VALIDATION_FAILED, `Cannot add this mirror: ${problems.join('; ')}.`, { problems });
  return { name: mirror.name, source, intervalSeconds: intervalSeconds! };
}

function resultOf(imported: ImportResult): MirrorRunResult {
  return {
    skills: imported.skills.map((skill) => ({
      name: skill.name,
      version: skill.version,
      digest: skill.digest,
      created: skill.created,
      held: skill.held === true,
    })),
    warnings: imported.warnings,
  };
}

function summaryOf(result: MirrorRunResult): string {
  const said = result.skills.map(
    (skill) =>
      `'${skill.name}' ${skill.held ? 'kept at its rolled-back' : skill.created ? 'new' : 'unchanged,'} version ` +
      `${skill.version}`,
  );
  return said.join(', ') || 'no skills';
}

function viewOf(mirror: StoredMirror): MirrorView {
  const { createdBy: _createdBy, ...shown } = mirror;
  return { ...shown, interval: formatMirrorInterval(mirror.intervalSeconds), readOnly: mirror.origin === 'config' };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
