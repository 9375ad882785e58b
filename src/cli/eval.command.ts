import { parseArgs } from 'node:util';
import { SkillRegistry } from '@skillhost/core';
import { z } from 'zod';
import type { AppConfig } from '../config/app-config.js';
import { loadConfig } from '../config/config-loader.js';
import type { ModelEvalResult } from '../domain/chats/model-eval.service.js';
import type { CaseResult } from '../domain/skills/evals/catalogue-eval.js';
import type { EvalRunStore } from '../domain/skills/evals/eval-run-store.js';
import type { CatalogueRun, SkillCatalogueRun } from '../domain/skills/evals/trigger-eval.service.js';
import { TriggerEvalService } from '../domain/skills/evals/trigger-eval.service.js';
import { skillsSettingsOf } from '../domain/skills/skills-settings-of.js';
import type { EvalCaseStore } from '../domain/skills/evals/eval-case-store.js';
import type { SkillStoreService } from '../domain/skills/store/skill-store.service.js';
import { withDomain, withServices } from './cli-context.js';
import { type CliIo, CommandFailure, UsageError } from './cli-io.js';
import { serverOption } from './credentials-file.js';
import { ServerClient } from './server-client.js';

const OPTIONS = {
  config: { type: 'string' },
  json: { type: 'boolean' },
  level: { type: 'string' },
  model: { type: 'string' },
  server: { type: 'string' },
  'key-env': { type: 'string' },
} as const;

type Level = 'catalogue' | 'model';

/** What the model level answers for several skills (`--json`): each one's run, in the order named. */
interface ModelRuns {
  level: 'model';
  skills: ModelEvalResult[];
}

/**
 * `skillhost eval [NAME…] [--level catalogue|model] [--model M] [--server URL]`: a skill's trigger evals.
 *
 * - The catalogue level (the default) against the team's catalogue as a server on this configuration and database reads
 *   it (its skills directories and store). No name: every skill with trigger evals, and the collisions between them.
 * - The model level (`--level model`, named skills): the server's own services on this configuration (its catalogue,
 *   planner, tools and the configured models, app/domain-modules.ts) ask the model, one call per case.
 * - `--server URL`: either level run by that server (`POST /v1/admin/skills/NAME/evals`), as the person logged in.
 *
 * Each run is kept, as the route keeps it. Exit 1 when a case fails, an eval file is not valid, or a run cannot be
 * made.
 */
export async function evalCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: OPTIONS });
  const level = levelOf(values.level);
  if (values.model !== undefined && level !== 'model') throw new UsageError('--model goes with --level model.');
  if (values['key-env'] !== undefined && values.server === undefined)
    throw new UsageError('--key-env goes with --server.');
  if (values.server !== undefined) {
    if (values.config !== undefined) throw new UsageError('--config is for the database; --server talks to a server.');
    if (positionals.length === 0) throw new UsageError('eval --server runs the skills named: give NAME….');
    const client = await ServerClient.connect(serverOption(values.server, 'eval'), values['key-env'], io);
    return report(await remoteRuns(client, positionals, level, values.model), values.json === true, io);
  }
  const config = loadConfig({ file: values.config, env: io.env, projectRoot: io.cwd });
  if (level === 'model') {
    if (positionals.length === 0)
      throw new UsageError('eval --level model runs the skills named (a model call per case): give NAME….');
    const runs = await withDomain(config, async (context) => {
      const evals = context.get(TriggerEvalService);
      const skills: ModelEvalResult[] = [];
      for (const name of positionals)
        skills.push((await evals.run(name, { level: 'model', model: values.model })) as ModelEvalResult);
      return { level: 'model', skills } satisfies ModelRuns;
    });
    return report(runs, values.json === true, io);
  }
  return withServices(config, async ({ store, runStore, caseStore }) => {
    const evals = await triggerEvals(config, store, runStore, caseStore);
    return report(await evals.keepCatalogue(await evals.runCatalogue(positionals)), values.json === true, io);
  });
}

/** The server's trigger evals on this process's own read of the catalogue (no server needs to run). */
export async function triggerEvals(
  config: AppConfig,
  store: SkillStoreService,
  runStore?: EvalRunStore,
  caseStore?: EvalCaseStore,
): Promise<TriggerEvalService> {
  const registry = new SkillRegistry(skillsSettingsOf(config), undefined, store);
  await registry.init();
  return new TriggerEvalService(config, store, registry, runStore, caseStore);
}

function levelOf(given: string | undefined): Level {
  if (given === undefined || given === 'catalogue' || given === 'model') return given ?? 'catalogue';
  throw new UsageError(`--level is catalogue or model; got '${given}'.`);
}

/** What the report reads of a server's answer (its strings are printed escaped, as a local run's are). */
const printed = z.string();
const remoteCase = z.object({
  query: z.string(),
  shouldTrigger: z.boolean(),
  expectSkill: printed.optional(),
  triggered: z.boolean().optional(),
  activated: z.array(printed).optional(),
  pass: z.boolean(),
});
const remoteScore = z.object({
  cases: z.number(),
  passed: z.number(),
  precision: z.number().nullable(),
  recall: z.number().nullable(),
});
const remoteSkillRun = z.object({
  skill: printed,
  digest: z.string().nullable(),
  score: remoteScore,
  cases: z.array(remoteCase),
});
const REMOTE_CATALOGUE_RUN = z.object({
  level: z.literal('catalogue'),
  limits: z.object({ budgetTokens: z.number(), maxSkills: z.number() }),
  skills: z.array(remoteSkillRun),
  withoutEvals: z.array(printed),
  invalid: z.array(z.object({ skill: printed, problems: z.array(z.string()) })),
});
const REMOTE_MODEL_RUN = remoteSkillRun.extend({ model: printed, calls: z.number(), notRun: z.number() });

/**
 * Each skill run by the server, one after another (the first refusal ends the command: what ran is kept there); at
 * the catalogue level the answers are one run, as a local run of the same skills reads.
 */
async function remoteRuns(
  client: ServerClient,
  names: readonly string[],
  level: Level,
  model: string | undefined,
): Promise<CatalogueRun | ModelRuns> {
  const body = level === 'model' ? { level, ...(model === undefined ? {} : { model }) } : {};
  const answers: unknown[] = [];
  // `…/evals`, not `…/evals/run`: a skill named `mirrors` reaches only this one (docs/http-api.md).
  for (const name of names) {
    const path = `v1/admin/skills/${encodeURIComponent(name)}/evals`;
    const answer = await client.json('POST', path, body);
    if (!(level === 'model' ? REMOTE_MODEL_RUN : REMOTE_CATALOGUE_RUN).safeParse(answer).success)
      throw new CommandFailure(
        `${new URL(path, client.server).href} answered 200 with JSON that is not a trigger eval run; is ` +
          `${client.server.href} a Skillhost server?`,
      );
    answers.push(answer);
  }
  if (level === 'model') return { level, skills: answers as ModelEvalResult[] };
  const runs = answers as CatalogueRun[];
  return {
    level,
    limits: runs[0].limits,
    skills: runs.flatMap((run) => run.skills),
    withoutEvals: runs.flatMap((run) => run.withoutEvals),
    invalid: runs.flatMap((run) => run.invalid),
  };
}

/** Prints the runs (or their JSON); 1 when a case failed or an evals file is not valid. */
function report(run: CatalogueRun | ModelRuns, json: boolean, given: CliIo): number {
  // What a run holds is others' text (a skill's file, a kept case, a server's answer): a control character in it is
  // printed as an escape, never sent to the terminal. JSON escapes C0 itself; C1 only appears inside its strings.
  const io = { ...given, out: (line: string) => given.out(line.replace(json ? C1 : CONTROL, escaped)) };
  if (json) io.out(JSON.stringify(run, null, 2));
  else if (run.level === 'model') printModelRuns(run, io);
  else printRun(run, io);
  const invalid = run.level === 'catalogue' && run.invalid.length > 0;
  return invalid || run.skills.some((skill) => skill.score.passed < skill.score.cases) ? 1 : 0;
}

const CONTROL = /\p{Cc}/gu;
const C1 = /[\u0080-\u009f]/g;

function escaped(character: string): string {
  return `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

function printRun(run: CatalogueRun, io: CliIo): void {
  const { budgetTokens, maxSkills } = run.limits;
  io.out(`Catalogue level: listed under ${budgetTokens} tokens and ${maxSkills} skills, ranked as a turn ranks.`);
  for (const skill of run.skills) printSkill(skill, io);
  for (const { skill, problems } of run.invalid) io.out(`${skill}: evals not valid: ${problems.join('; ')}`);
  if (run.withoutEvals.length > 0) io.out(`Without trigger evals: ${run.withoutEvals.join(', ')}`);
  for (const collision of run.collisions ?? [])
    io.out(
      `Collision: ${JSON.stringify(collision.query)} (${collision.skill}) also ranks ${collision.competitor} ` +
        `(${collision.competitorScore.toFixed(2)} against ${collision.skillScore.toFixed(2)})`,
    );
}

function printSkill(skill: SkillCatalogueRun, io: CliIo): void {
  io.out(`${skill.skill}: ${scoreText(skill.score)}${digestText(skill.digest)}`);
  for (const entry of skill.cases) {
    if (entry.pass) continue;
    const why = entry.shouldTrigger
      ? 'should be listed, is not'
      : entry.triggered
        ? 'should not be listed, is'
        : `${entry.expectSkill} should be listed, is not`;
    io.out(`  FAIL ${JSON.stringify(entry.query)}${entry.source === 'kept' ? ' (kept case)' : ''}: ${why}`);
  }
}

function printModelRuns(runs: ModelRuns, io: CliIo): void {
  io.out('Model level: each case is the first step of a turn in a new chat, one model call.');
  for (const run of runs.skills) {
    io.out(
      `${run.skill} with model ${run.model}: ${scoreText(run.score)}, ${run.calls} call(s)${digestText(run.digest)}`,
    );
    for (const entry of run.cases) if (!entry.pass) io.out(`  FAIL ${JSON.stringify(entry.query)}: ${modelWhy(entry)}`);
    if (run.notRun > 0)
      io.out(`  ${run.notRun} case(s) not run: the call budget ([app.skills.evals] model_max_calls) ran out`);
  }
}

/** Why a case failed at the model level, with what the model activated. */
function modelWhy(entry: CaseResult): string {
  const activated = entry.activated?.length ? entry.activated.join(', ') : 'none';
  const what = entry.shouldTrigger
    ? 'should be activated, is not'
    : entry.triggered
      ? 'should not be activated, is'
      : `${entry.expectSkill} should be activated, is not`;
  return `${what} (activated: ${activated})`;
}

function scoreText(score: SkillCatalogueRun['score']): string {
  const { passed, cases, precision, recall } = score;
  return `${passed}/${cases} passed, precision ${percent(precision)}, recall ${percent(recall)}`;
}

function digestText(digest: string | null): string {
  return digest === null ? '' : ` (${digest.slice(0, 19)}…)`;
}

function percent(ratio: number | null): string {
  return ratio === null ? '—' : `${Math.round(ratio * 100)}%`;
}
