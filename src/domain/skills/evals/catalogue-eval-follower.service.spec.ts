import { describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import type { CatalogueSnapshot, SkillRecord, SkillRegistry } from '@skillhost/core';
import type { AppConfig } from '../../../config/app-config.js';
import { COMMAND_PROCESS, SINGLE_PROCESS } from '../../../config/process-role.js';
import { CatalogueEvalFollowerService } from './catalogue-eval-follower.service.js';
import type { EvalRunStore, StoredEvalRun } from './eval-run-store.js';
import type { CatalogueRun, TriggerEvalService } from './trigger-eval.service.js';

function skill(name: string, digest = `sha256:${name}-1`, description = `Does ${name} things.`): SkillRecord {
  return { name, description, digest, path: `/skills/${name}`, frontmatter: { name } } as unknown as SkillRecord;
}

function catalogue(...skills: SkillRecord[]): CatalogueSnapshot {
  return {
    skills: new Map(skills.map((record) => [record.name, record])),
    groupOnly: { skills: [] },
  } as unknown as CatalogueSnapshot;
}

/** A registry that swaps in what the test gives it, a catalogue level that passes every skill's one case. */
function fakes(first: CatalogueSnapshot) {
  const listeners = new Set<(snapshot: CatalogueSnapshot) => void>();
  const registry = {
    snapshot: first,
    onSwap(listener: (snapshot: CatalogueSnapshot) => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  const asked: string[][] = [];
  const evals = {
    async runCatalogue(names: readonly string[]): Promise<CatalogueRun> {
      asked.push([...names]);
      const skills = names.map((name) => ({
        skill: name,
        digest: registry.snapshot.skills.get(name)?.digest ?? null,
        complete: true,
        score: { cases: 1, passed: 1 } as CatalogueRun['skills'][number]['score'],
        cases: [],
      }));
      return {
        level: 'catalogue',
        limits: { budgetTokens: 1, maxSkills: 1, format: 'xml' },
        skills,
        withoutEvals: [],
        invalid: [],
      };
    },
  };
  const kept: Omit<StoredEvalRun, 'runAt'>[] = [];
  const runs = {
    failing: false,
    async keep(run: Omit<StoredEvalRun, 'runAt'>) {
      if (runs.failing) throw new Error('the database is away');
      kept.push(run);
      return true;
    },
    save: async () => undefined,
    runsOf: async () => [],
  };
  const swap = (snapshot: CatalogueSnapshot) => {
    registry.snapshot = snapshot;
    for (const listener of listeners) listener(snapshot);
  };
  return { registry, evals, runs, asked, kept, swap };
}

const config = { app: { skills: { enabled: true } } } as unknown as AppConfig;

function follower(f: ReturnType<typeof fakes>, role = SINGLE_PROCESS) {
  return new CatalogueEvalFollowerService(
    config,
    f.registry as unknown as SkillRegistry,
    f.evals as unknown as TriggerEvalService,
    f.runs as unknown as EvalRunStore,
    role,
  );
}

describe(CatalogueEvalFollowerService.name, () => {
  it('runs every skill at start-up, then only what a change may move, once for changes close together', async () => {
    const f = fakes(catalogue(skill('pdf'), skill('git-commit')));
    const sut = follower(f);
    sut.onApplicationBootstrap();
    await sut.settled();
    expect(f.asked).toEqual([['pdf', 'git-commit']]);
    // Two new versions of pdf in quick succession, its entry the same: one run, of pdf alone.
    f.swap(catalogue(skill('pdf', 'sha256:pdf-2'), skill('git-commit')));
    f.swap(catalogue(skill('pdf', 'sha256:pdf-3'), skill('git-commit')));
    await sut.settled();
    expect(f.asked.slice(1)).toEqual([['pdf']]);
    expect(f.kept.at(-1)).toMatchObject({ skill: 'pdf', digest: 'sha256:pdf-3', level: 'catalogue', model: '' });
    // A new description: every skill again.
    f.swap(catalogue(skill('pdf', 'sha256:pdf-4', 'Fills PDF forms.'), skill('git-commit')));
    await sut.settled();
    expect(f.asked.slice(2)).toEqual([['pdf', 'git-commit']]);
    await sut.onModuleDestroy();
  });

  it('logs a run that fails, and runs it again with the next change', async () => {
    const error = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      const f = fakes(catalogue(skill('pdf'), skill('docx')));
      const sut = follower(f);
      f.runs.failing = true;
      sut.onApplicationBootstrap();
      await sut.settled();
      expect(error).toHaveBeenCalledWith(
        'Running the trigger evals (catalogue level) after a change of the catalogue failed: the database is away',
      );
      f.runs.failing = false;
      // A change that alone would run docx only: pdf, whose run failed, is run with it.
      f.swap(catalogue(skill('pdf'), skill('docx', 'sha256:docx-2')));
      await sut.settled();
      expect(f.kept.map((run) => run.skill).sort()).toEqual(['docx', 'pdf']);
      await sut.onModuleDestroy();
    } finally {
      error.mockRestore();
    }
  });

  it('runs nothing in a command, nor once stopped', async () => {
    const f = fakes(catalogue(skill('pdf')));
    const command = follower(f, COMMAND_PROCESS);
    command.onApplicationBootstrap();
    await command.settled();
    const sut = follower(f);
    sut.onApplicationBootstrap();
    await sut.onModuleDestroy();
    f.swap(catalogue(skill('pdf', 'sha256:pdf-2')));
    await sut.settled();
    expect(f.asked).toEqual([]);
  });
});
