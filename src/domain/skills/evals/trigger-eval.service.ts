import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Inject, Injectable, Logger, type OnModuleInit, Optional } from '@nestjs/common';
import {
  AppError,
  CatalogueChooser,
  type CatalogueLimits,
  type CatalogueSnapshot,
  ErrorCode,
  runInSlices,
  type SkillRecord,
  SkillRegistry,
} from '@skillhost/core';
import { SkillRegistryService } from '@skillhost/nest';
import { APP_CONFIG, type AppConfig } from '../../../config/app-config.js';
import { unstorableStringProblems, validationFailed } from '../../shared/validation-errors.js';
import type { Principal } from '../../users/principal.js';
import type { InstallCandidate, InstallGate } from '../store/install-gate.js';
import { SkillStoreService } from '../store/skill-store.service.js';
import {
  type CaseResult,
  type CatalogueEvalResult,
  catalogueEval,
  catalogueEvalSteps,
  type EvalView,
  evalView,
  evalViewSteps,
  regressedCases,
  withCandidate,
} from './catalogue-eval.js';
import { EVAL_CASE_STORE, type EvalCaseStore, type KeptEvalCase } from './eval-case-store.js';
import { EVAL_RUN_STORE, type EvalRunStore, keptCatalogueRun, type StoredEvalRun } from './eval-run-store.js';
import { casesForRun } from './kept-eval-cases.js';
import { findCollisions, type TriggerCollision } from './trigger-collisions.js';
import { parseTriggerEvals, selfExpectationProblems, TRIGGER_EVALS_FILE, type TriggerCase } from './trigger-evals.js';

/** Candidates' runs remembered between the gate and the end of their install: more are installs that failed. */
const MAX_GATE_RUNS = 100;

/** One skill's catalogue run: its version, and how its cases went. */
export interface SkillCatalogueRun extends CatalogueEvalResult {
  digest: string | null;
}

/** A catalogue run over some skills (or all): each one's result, the skills whose evals could not be read. */
export interface CatalogueRun {
  level: 'catalogue';
  limits: CatalogueLimits;
  skills: SkillCatalogueRun[];
  /** Skills asked for (or offered) with no trigger evals. */
  withoutEvals: string[];
  /** Skills whose `evals/triggers.json` is not valid, and why. */
  invalid: { skill: string; problems: string[] }[];
  /** Requests of one skill's positive cases for which another skill ranks as high or higher (a run over all). */
  collisions?: TriggerCollision[];
}

/** The model level, when the chats are there to run it (ModelEvalService). */
export type ModelLevel = (
  snapshot: CatalogueSnapshot,
  skill: { name: string; digest: string | null },
  cases: readonly TriggerCase[],
  model: string | undefined,
) => Promise<unknown>;

/**
 * Trigger evals at the catalogue level: a skill's cases against the team's catalogue, ranked as a turn ranks them.
 * The publishing gate (`[app.skills.evals] gate`) compares a new version with the serving one before the store keeps
 * it; runs answer the admin route and `skillhost eval`.
 */
@Injectable()
export class TriggerEvalService implements OnModuleInit, InstallGate {
  private readonly logger = new Logger('TriggerEvals');
  private readonly limits: CatalogueLimits;
  private modelLevel: ModelLevel | undefined;
  private lastView: { snapshot: CatalogueSnapshot; extra: string; view: Promise<EvalView> } | undefined;
  /** The gate's runs of candidates by digest, kept once they are installed (`installed`). */
  private readonly gateRuns = new Map<string, SkillCatalogueRun>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly store: SkillStoreService,
    @Inject(SkillRegistryService) private readonly registry: SkillRegistry,
    @Optional() @Inject(EVAL_RUN_STORE) private readonly runs?: EvalRunStore,
    @Optional() @Inject(EVAL_CASE_STORE) private readonly keptCases?: EvalCaseStore,
  ) {
    this.limits = new CatalogueChooser(config.app.skills).limits;
  }

  onModuleInit(): void {
    if (this.config.app.skills.enabled) this.store.useInstallGate(this);
  }

  /**
   * The gate: for each candidate replacing a serving version, its catalogue recall on its cases (its own file's, else
   * the serving version's, and a shared skill's kept cases) against the serving version's. Lower: a warning (`warn`),
   * or EVAL_REGRESSION for the whole install (`refuse`), listing the cases that passed and no longer do.
   */
  async check(candidates: readonly InstallCandidate[]): Promise<ReadonlyMap<string, readonly string[]>> {
    const warnings = new Map<string, string[]>();
    const parsed = candidates.map((candidate) => ({ ...candidate, cases: casesOfFile(candidate) }));
    if (this.config.app.skills.evals.gate === 'off') return warnings;
    const snapshot = this.registry.snapshot;
    for (const candidate of parsed) {
      const serving = servingRecord(snapshot, candidate);
      if (serving === undefined) continue;
      // Kept cases are a team skill's: a personal skill of the same name has only its file's.
      const kept = candidate.key.scope === 'shared' ? await this.keptOf([serving.name]) : undefined;
      const cases = casesForRun(candidate.cases ?? readCases(serving).cases, kept?.get(serving.name) ?? []);
      if (cases === undefined) continue;
      const records = withCandidate(recordsFor(snapshot, candidate.key.ownerId), serving);
      const before = catalogueEval(evalView(records, this.limits), this.limits, serving.name, cases);
      const after = catalogueEval(
        evalView(withCandidate(records, candidate.record), this.limits),
        this.limits,
        serving.name,
        cases,
      );
      const [was, now] = [before.score.recall ?? 1, after.score.recall ?? 1];
      const passed = now >= was || this.config.app.skills.evals.gate !== 'refuse';
      if (passed && candidate.key.scope === 'shared') this.rememberGateRun({ ...after, digest: candidate.digest });
      if (now >= was) continue;
      const regressed = regressedCases(before.cases, after.cases);
      const text =
        `The new version of '${serving.name}' lists the skill for fewer of its trigger evals' requests ` +
        `(catalogue recall ${percent(was)} → ${percent(now)}); it no longer does for: ` +
        `${regressed.map((entry) => JSON.stringify(entry.query)).join(', ')}.`;
      if (this.config.app.skills.evals.gate === 'refuse')
        throw new AppError(
          ErrorCode.EVAL_REGRESSION,
          `${text} Nothing was installed: the serving version stays. Put those words back in the description, or ` +
            'ask an admin to set [app.skills.evals] gate = "warn".',
          { skill: serving.name, recallBefore: was, recallAfter: now, regressed: regressed.map(caseView) },
        );
      this.logger.warn(text);
      warnings.set(serving.name, [...(warnings.get(serving.name) ?? []), text]);
    }
    return warnings;
  }

  /** Keeps the gate's runs of the versions now installed (a shared skill's: the runs of personal ones are not kept). */
  async installed(versions: readonly { key: InstallCandidate['key']; digest: string }[]): Promise<void> {
    for (const { key, digest } of versions) {
      const run = this.gateRuns.get(digest);
      this.gateRuns.delete(digest);
      if (run === undefined || key.scope !== 'shared' || run.skill !== key.name) continue;
      await this.runs
        ?.keep(keptCatalogueRun(run.skill, digest, run))
        .catch((error: unknown) =>
          this.logger.error(`Keeping the gate's run of '${run.skill}' failed: ${(error as Error).message}`),
        );
    }
  }

  /** A candidate's run, until its install is done (or failed: the oldest are forgotten). */
  private rememberGateRun(run: SkillCatalogueRun & { digest: string }): void {
    this.gateRuns.delete(run.digest);
    this.gateRuns.set(run.digest, run);
    if (this.gateRuns.size > MAX_GATE_RUNS) this.gateRuns.delete(this.gateRuns.keys().next().value!);
  }

  /**
   * The catalogue level for these skills of the team's catalogue (none: every skill with trigger evals, with the
   * collisions between them), on each one's file's and kept cases. SKILL_NOT_FOUND for a name the catalogue does not
   * offer.
   */
  async runCatalogue(names: readonly string[] = []): Promise<CatalogueRun> {
    const snapshot = this.registry.snapshot;
    const chosen =
      names.length === 0 ? [...snapshot.skills.values()] : names.map((name) => offeredRecord(snapshot, name));
    // A skill shared with groups is ranked among the team's skills, as its groups' members see it. Built only when a
    // skill has cases to run.
    const view = () =>
      this.viewOf(
        snapshot,
        chosen.filter((record) => !snapshot.skills.has(record.name)),
      );
    const run: CatalogueRun = { level: 'catalogue', limits: this.limits, skills: [], withoutEvals: [], invalid: [] };
    const withCases: { skill: string; cases: readonly TriggerCase[] }[] = [];
    const kept = await this.keptOf(chosen.map((record) => record.name));
    for (const record of chosen) {
      const read = casesOf(record, kept.get(record.name) ?? []);
      if (read.problems !== undefined) run.invalid.push({ skill: record.name, problems: read.problems });
      else if (read.cases === undefined) run.withoutEvals.push(record.name);
      else {
        withCases.push({ skill: record.name, cases: read.cases });
        run.skills.push(await this.skillRun(await view(), record, read.cases));
      }
    }
    if (names.length === 0) run.collisions = withCases.length === 0 ? [] : findCollisions(await view(), withCases);
    return run;
  }

  useModelLevel(level: ModelLevel): void {
    this.modelLevel = level;
  }

  /**
   * The model level for one skill: whether the configured model (`model`, else the default) activates it for each
   * request, within `[app.skills.evals] model_max_calls` calls. VALIDATION_FAILED without cases or a model.
   */
  async runModel(name: string, model: string | undefined): Promise<unknown> {
    const snapshot = this.registry.snapshot;
    const record = offeredRecord(snapshot, name);
    const read = casesOf(record, (await this.keptOf([name])).get(name) ?? []);
    if (read.cases === undefined)
      throw new AppError(
        ErrorCode.VALIDATION_FAILED,
        read.problems === undefined
          ? `The skill '${name}' has no trigger evals (no ${TRIGGER_EVALS_FILE}, no kept cases); add some ` +
              `(POST /v1/admin/skills/${name}/evals/cases) to run the model level.`
          : `The skill '${name}' has trigger evals that are not valid: ${read.problems.join('; ')}`,
        { problems: read.problems ?? [`${name}: no ${TRIGGER_EVALS_FILE}`] },
      );
    if (this.modelLevel === undefined)
      throw new AppError(ErrorCode.VALIDATION_FAILED, 'The model level needs the chats, which this process lacks.', {
        problems: ['level: model is not available here'],
      });
    return this.modelLevel(snapshot, { name, digest: record.digest ?? null }, read.cases, model);
  }

  /**
   * The catalogue level for one skill, for an admin or an editor who (or whose group) owns it (FORBIDDEN for others,
   * as publishing is).
   */
  async runFor(
    name: string,
    principal: Principal,
    request: { level?: 'catalogue' | 'model'; model?: string } = {},
  ): Promise<unknown> {
    await this.assertMayEvaluate(name, principal);
    return this.run(name, request);
  }

  /** One skill's evals at a level, kept (the route's run, and `skillhost eval`'s on the server's own services). */
  async run(name: string, request: { level?: 'catalogue' | 'model'; model?: string } = {}): Promise<unknown> {
    if (request.level !== 'model') return this.keepCatalogue(await this.runCatalogue([name]));
    const run = (await this.runModel(name, request.model)) as ModelRun;
    if (run.digest !== null)
      await this.runs?.save({ skill: name, digest: run.digest, level: 'model', model: run.model, ...scored(run) });
    return run;
  }

  /** Keeps each skill's catalogue result (a version without a digest, a programmatic skill's, is not kept). */
  async keepCatalogue(run: CatalogueRun): Promise<CatalogueRun> {
    for (const skill of run.skills)
      if (skill.digest !== null) await this.runs?.save(keptCatalogueRun(skill.skill, skill.digest, skill));
    return run;
  }

  /** A skill's kept runs, newest first: precision and recall per version, level and model (as runFor allows). */
  async history(name: string, principal: Principal): Promise<{ skill: string; runs: StoredEvalRun[] }> {
    await this.assertMayEvaluate(name, principal);
    return { skill: name, runs: (await this.runs?.runsOf(name)) ?? [] };
  }

  /** The cases of a skill's file as the catalogue offers it, or its problems; SKILL_NOT_FOUND when not offered. */
  fileCasesOf(name: string): { cases?: TriggerCase[]; problems?: string[] } {
    return readCases(offeredRecord(this.registry.snapshot, name));
  }

  /** Whoever may run a skill's evals may see and change its cases: admins, and editors who (or whose group) own it. */
  async assertMayEvaluate(name: string, principal: Principal): Promise<void> {
    // A name from a path is not checked by the body pipe: one PostgreSQL cannot store names no skill.
    const problems = unstorableStringProblems({ name });
    if (problems.length > 0) throw validationFailed(problems);
    if (principal.role !== 'admin') await this.assertOwns(name, principal);
  }

  private async keptOf(names: readonly string[]): Promise<Map<string, KeptEvalCase[]>> {
    return this.keptCases === undefined || names.length === 0 ? new Map() : this.keptCases.casesOf(names);
  }

  private async assertOwns(name: string, principal: Principal): Promise<void> {
    const refused = new AppError(
      ErrorCode.FORBIDDEN,
      `Admins run any skill's evals, editors those of the shared skills they or one of their groups own, and ` +
        `'${name}' is not one of them; an admin can make you its owner (PUT /v1/admin/skills/${name}/access).`,
      { name },
    );
    if (principal.role !== 'editor') throw refused;
    const access = await this.store.access(name).catch((error: unknown) => {
      if (AppError.isInstance(error) && error.code === ErrorCode.SKILL_NOT_FOUND) throw refused;
      throw error;
    });
    const groups = await this.store.userGroups(principal.userId);
    const owns =
      access.owningUser?.id === principal.userId ||
      (access.owningGroup !== null && groups.includes(access.owningGroup.id));
    if (!owns) throw refused;
  }

  /**
   * The team's skills (and these group-only ones) indexed for ranking, built in slices once per catalogue (a run in
   * slices reads the same one).
   */
  private viewOf(snapshot: CatalogueSnapshot, groupOnly: readonly SkillRecord[]): Promise<EvalView> {
    const extra = groupOnly.map((record) => record.name).join('\n');
    if (this.lastView?.snapshot === snapshot && this.lastView.extra === extra) return this.lastView.view;
    const view = runInSlices(evalViewSteps([...snapshot.skills.values(), ...groupOnly], this.limits));
    this.lastView = { snapshot, extra, view };
    return view;
  }

  /** One skill's cases, a case at a time: requests are served meanwhile. */
  private async skillRun(
    view: EvalView,
    record: SkillRecord,
    cases: readonly TriggerCase[],
  ): Promise<SkillCatalogueRun> {
    const result = await runInSlices(catalogueEvalSteps(view, this.limits, record.name, cases));
    return { ...result, digest: record.digest ?? null };
  }
}

/** The version a candidate replaces, when it serves: the team's skill, or the owner's personal one. */
function servingRecord(snapshot: CatalogueSnapshot, candidate: InstallCandidate): SkillRecord | undefined {
  const { scope, ownerId, name } = candidate.key;
  if (scope === 'personal') return ownerId === null ? undefined : snapshot.personal.get(ownerId)?.skills.get(name);
  const record = snapshot.skills.get(name) ?? snapshot.groupOnly.skills.find((skill) => skill.name === name);
  return record?.store?.scope === 'shared' ? record : undefined;
}

/** A skill the team's catalogue offers, to everyone or to some groups; SKILL_NOT_FOUND for any other name. */
function offeredRecord(snapshot: CatalogueSnapshot, name: string): SkillRecord {
  const record = snapshot.skills.get(name) ?? snapshot.groupOnly.skills.find((skill) => skill.name === name);
  if (record === undefined)
    throw new AppError(
      ErrorCode.SKILL_NOT_FOUND,
      `No skill named '${name}' is offered (switched off, or never installed); see GET /v1/admin/skills for the names.`,
      { name },
    );
  return record;
}

/** The skills a request of this owner (or the team, null) is ranked among. */
function recordsFor(snapshot: CatalogueSnapshot, ownerId: string | null): SkillRecord[] {
  const team = [...snapshot.skills.values()];
  const personal = ownerId === null ? undefined : snapshot.personal.get(ownerId);
  if (personal === undefined) return team;
  return [...team.filter((record) => !personal.skills.has(record.name)), ...personal.skills.values()];
}

/**
 * A new version's trigger evals, or undefined without the file; VALIDATION_FAILED naming the skill, the file, each bad
 * case and why (nothing of the install is stored).
 */
function casesOfFile(candidate: InstallCandidate): TriggerCase[] | undefined {
  if (candidate.evalsFile === undefined) return undefined;
  const parsed = parseTriggerEvals(candidate.evalsFile.toString('utf8'));
  const problems =
    'cases' in parsed
      ? selfExpectationProblems(candidate.record.name, parsed.cases, TRIGGER_EVALS_FILE)
      : parsed.problems;
  if ('cases' in parsed && problems.length === 0) return parsed.cases;
  throw new AppError(
    ErrorCode.VALIDATION_FAILED,
    `The trigger evals of '${candidate.record.name}' are not valid, so nothing was installed: ` +
      `${problems.join('; ')}. See docs/trigger-evals.md for the format, or leave the file out.`,
    { problems, skill: candidate.record.name },
  );
}

/** A skill's cases for a run: its file's and its kept ones (casesForRun), or its file's problems. */
function casesOf(record: SkillRecord, kept: readonly KeptEvalCase[]): { cases?: TriggerCase[]; problems?: string[] } {
  const file = readCases(record);
  if (file.problems !== undefined) return file;
  const cases = casesForRun(file.cases, kept);
  return cases === undefined ? {} : { cases };
}

/** A loaded skill's trigger evals, from its folder: the cases, the file's problems, or neither without the file. */
function readCases(record: SkillRecord): { cases?: TriggerCase[]; problems?: string[] } {
  let text: string;
  try {
    text = readFileSync(join(record.path, TRIGGER_EVALS_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    return { problems: [`${TRIGGER_EVALS_FILE}: unreadable (${(error as Error).message})`] };
  }
  const parsed = parseTriggerEvals(text);
  return 'cases' in parsed ? { cases: parsed.cases } : { problems: parsed.problems };
}

/** What the model level answers (ModelEvalService), as far as it is kept. */
interface ModelRun extends Pick<StoredEvalRun, 'score' | 'cases' | 'model'> {
  digest: string | null;
}

function scored(run: Pick<StoredEvalRun, 'score' | 'cases'>): Pick<StoredEvalRun, 'score' | 'cases'> {
  return { score: run.score, cases: run.cases };
}

function caseView(entry: CaseResult) {
  return {
    query: entry.query,
    shouldTrigger: entry.shouldTrigger,
    ...(entry.expectSkill === undefined ? {} : { expectSkill: entry.expectSkill }),
    ...(entry.source === undefined ? {} : { source: entry.source }),
  };
}

function percent(ratio: number): string {
  return `${Math.round(ratio * 100)}%`;
}
