import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
  Optional,
} from '@nestjs/common';
import type { CatalogueSnapshot, SkillRecord, SkillRegistry } from '@skillhost/core';
import { SkillRegistryService } from '@skillhost/nest';
import { APP_CONFIG, type AppConfig } from '../../../config/app-config.js';
import { PROCESS_ROLE, type ProcessRole } from '../../../config/process-role.js';
import { type EvalRerun, evalRerunOf, mergeReruns, offeredSkills } from './catalogue-change.js';
import { EVAL_RUN_STORE, type EvalRunStore, keptCatalogueRun } from './eval-run-store.js';
import { TriggerEvalService } from './trigger-eval.service.js';

/** How long the catalogue must stay unchanged before its evals run: an import or a `git pull` is several swaps. */
export const EVAL_FOLLOW_DELAY_MS = 500;
/** Skills run between two turns of the event loop: requests are served while thousands of skills are looked at. */
const SKILLS_PER_SLICE = 8;

/**
 * The catalogue level after every change of the catalogue (docs/trigger-evals.md, "Kept runs"): an install, rollback,
 * switch or uninstall (here, or on another instance, heard through PostgreSQL), a reload, a change on disk, and the
 * first read at start-up. It runs the skills whose results the change may have moved (catalogue-change.ts) shortly
 * after, a slice at a time, off the request path, and keeps each result that differs from the kept one: every instance
 * runs the same evals on the same catalogue, and only the first writes. A failure is logged; nothing else depends on
 * it.
 */
@Injectable()
export class CatalogueEvalFollowerService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('TriggerEvals');
  /** The catalogue the last run started from, and what a failed run still asks for. */
  private seen: CatalogueSnapshot | undefined;
  private pending: EvalRerun | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private unfollow: (() => void) | undefined;
  private offeredOf: { snapshot: CatalogueSnapshot; skills: ReadonlyMap<string, SkillRecord> } | undefined;
  /** Evals files already reported as not valid, by skill and version: one warning each. */
  private readonly reported = new Set<string>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SkillRegistryService) private readonly registry: SkillRegistry,
    private readonly evals: TriggerEvalService,
    @Optional() @Inject(EVAL_RUN_STORE) private readonly runs?: EvalRunStore,
    @Optional() @Inject(PROCESS_ROLE) private readonly role?: ProcessRole,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.app.skills.enabled || this.runs === undefined || this.role?.runsBackgroundWork === false) return;
    this.unfollow = this.registry.onSwap(() => this.swapped());
    this.swapped();
  }

  /** Stops between two slices; a write under way finishes before the database closes. */
  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    this.unfollow?.();
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** Resolves once nothing is waiting or running (tests and benchmarks). */
  async settled(): Promise<void> {
    while (this.timer !== undefined || this.running !== undefined) {
      if (this.running !== undefined) await this.running;
      else await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /**
   * A skill's kept cases changed (added or removed): its catalogue level runs again, as after a change of it (nothing
   * where the follower does not run).
   */
  casesChanged(name: string): void {
    if (this.unfollow === undefined) return;
    this.pending = mergeReruns(this.pending, new Set([name]));
    this.swapped();
  }

  /** Called in the swap: only the timer is set (what changed is compared once the catalogue is quiet). */
  private swapped(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.start(), EVAL_FOLLOW_DELAY_MS);
    this.timer.unref();
  }

  /** One run at a time: a change during a run is run after it. */
  private start(): void {
    this.timer = undefined;
    if (this.running !== undefined) return this.swapped();
    let rerun: EvalRerun | undefined;
    this.running = (async () => {
      const snapshot = this.registry.snapshot;
      rerun = mergeReruns(this.pending, evalRerunOf(this.seen, snapshot));
      [this.seen, this.pending] = [snapshot, undefined];
      if (rerun !== undefined) await this.run(rerun);
    })()
      .catch((error: unknown) => {
        // Asked again with the next change; what this run kept stays.
        this.pending = mergeReruns(this.pending, rerun);
        this.logger.error(
          `Running the trigger evals (catalogue level) after a change of the catalogue failed: ` +
            `${error instanceof Error ? error.message : String(error)}`,
        );
      })
      .finally(() => {
        this.running = undefined;
      });
  }

  /** The skills asked for that the catalogue still offers, a slice at a time, each slice on the catalogue of then. */
  private async run(rerun: EvalRerun): Promise<void> {
    let kept = 0;
    for (const slice of slicesOf(this.registry.snapshot, rerun)) {
      if (this.stopped) return;
      const offered = this.offered();
      const names = slice.filter((name) => offered.has(name));
      if (names.length > 0) kept += await this.runSlice(names);
      await nextTurn();
    }
    if (kept > 0) this.logger.log(`Trigger evals (catalogue level) after a change: ${kept} new result(s) kept`);
  }

  /** The skills the current catalogue offers, by name (made again only when the catalogue changed). */
  private offered(): ReadonlyMap<string, SkillRecord> {
    const snapshot = this.registry.snapshot;
    if (this.offeredOf?.snapshot !== snapshot) this.offeredOf = { snapshot, skills: offeredSkills(snapshot) };
    return this.offeredOf.skills;
  }

  private async runSlice(names: string[]): Promise<number> {
    const run = await this.evals.runCatalogue(names);
    let kept = 0;
    for (const skill of run.skills) {
      if (skill.digest !== null && (await this.runs!.keep(keptCatalogueRun(skill.skill, skill.digest, skill)))) kept++;
    }
    for (const { skill, problems } of run.invalid) {
      const key = `${skill}\u0000${this.offered().get(skill)?.digest ?? ''}`;
      if (this.reported.has(key)) continue;
      this.reported.add(key);
      this.logger.warn(`The trigger evals of '${skill}' are not valid, so they were not run: ${problems.join('; ')}`);
    }
    return kept;
  }
}

/**
 * The skills to run, in slices: the team's several at a time (ranked in one view of the catalogue), each skill shared
 * with groups alone (ranked among the team's skills and itself, as its groups' members see it).
 */
function slicesOf(snapshot: CatalogueSnapshot, rerun: EvalRerun): string[][] {
  const names = [...(rerun === 'all' ? offeredSkills(snapshot).keys() : rerun)];
  const team = names.filter((name) => snapshot.skills.has(name));
  const slices: string[][] = [];
  for (let start = 0; start < team.length; start += SKILLS_PER_SLICE)
    slices.push(team.slice(start, start + SKILLS_PER_SLICE));
  return [...slices, ...names.filter((name) => !snapshot.skills.has(name)).map((name) => [name])];
}
