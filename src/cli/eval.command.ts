import { parseArgs } from 'node:util';
import { SkillRegistry } from '@skillhost/core';
import type { AppConfig } from '../config/app-config.js';
import { loadConfig } from '../config/config-loader.js';
import type { CatalogueRun, SkillCatalogueRun } from '../domain/skills/evals/trigger-eval.service.js';
import { TriggerEvalService } from '../domain/skills/evals/trigger-eval.service.js';
import { skillsSettingsOf } from '../domain/skills/skills-settings-of.js';
import type { EvalRunStore } from '../domain/skills/evals/eval-run-store.js';
import type { SkillStoreService } from '../domain/skills/store/skill-store.service.js';
import { withServices } from './cli-context.js';
import type { CliIo } from './cli-io.js';

const OPTIONS = { config: { type: 'string' }, json: { type: 'boolean' } } as const;

/**
 * `skillhost eval [NAME…]`: the catalogue level of the skills' trigger evals against the team's catalogue as a server
 * on this configuration and database reads it (its skills directories and store). No name: every skill with trigger
 * evals, and the collisions between them. Exit 1 when a case fails or an eval file is not valid.
 */
export async function evalCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: OPTIONS });
  const config = loadConfig({ file: values.config, env: io.env, projectRoot: io.cwd });
  return withServices(config, async ({ store, runStore }) => {
    const evals = await triggerEvals(config, store, runStore);
    const run = await evals.keepCatalogue(await evals.runCatalogue(positionals));
    if (values.json) io.out(JSON.stringify(run, null, 2));
    else printRun(run, io);
    const failed = run.invalid.length > 0 || run.skills.some((skill) => skill.score.passed < skill.score.cases);
    return failed ? 1 : 0;
  });
}

/** The server's trigger evals on this process's own read of the catalogue (no server needs to run). */
export async function triggerEvals(
  config: AppConfig,
  store: SkillStoreService,
  runStore?: EvalRunStore,
): Promise<TriggerEvalService> {
  const registry = new SkillRegistry(skillsSettingsOf(config), undefined, store);
  await registry.init();
  return new TriggerEvalService(config, store, registry, runStore);
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
  const { passed, cases, precision, recall } = skill.score;
  io.out(
    `${skill.skill}: ${passed}/${cases} passed, precision ${percent(precision)}, recall ${percent(recall)}` +
      `${skill.digest === null ? '' : ` (${skill.digest.slice(0, 19)}…)`}`,
  );
  for (const entry of skill.cases) {
    if (entry.pass) continue;
    const why = entry.shouldTrigger
      ? 'should be listed, is not'
      : entry.triggered
        ? 'should not be listed, is'
        : `${entry.expectSkill} should be listed, is not`;
    io.out(`  FAIL ${JSON.stringify(entry.query)}: ${why}`);
  }
}

function percent(ratio: number | null): string {
  return ratio === null ? '—' : `${Math.round(ratio * 100)}%`;
}
