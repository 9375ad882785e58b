import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { type TempTree, tempTree, writeSkill } from '../../../../test/support/files/skill-tree.js';
import { parseSkillsOptions } from '../options/skills-options.schema.js';
import { type ProgrammaticSkill, programmaticSkillRecord } from '../skill/programmatic-skill.js';
import type { SkillSource } from '../sources/skill-source.js';
import { SkillRegistry } from './skill-registry.js';
import { SILENT_LOGGER } from './skills-logger.js';
import { type SkillsSettings, settingsOfOptions } from './skills-settings.js';

/** An app's options with every default, as `SkillsModule.forRoot` resolves them. */
function settingsFor(directory: string): SkillsSettings {
  const parsed = parseSkillsOptions({ directories: [directory] }, { root: directory, home: directory });
  if (!parsed.ok) throw new Error(parsed.problems.join('; '));
  return settingsOfOptions(parsed.options);
}

/** An app's own source: skills kept as rows of its database, read on every load; `state` counts and fails loads. */
function databaseSource(rows: ProgrammaticSkill[], precedence?: number) {
  const state = { loads: 0, failure: undefined as Error | undefined };
  const source: SkillSource = {
    name: 'database',
    precedence,
    async load() {
      state.loads++;
      if (state.failure !== undefined) throw state.failure;
      return { skills: rows.map((row) => programmaticSkillRecord(row, 'user')) };
    },
  };
  return { source, state };
}

const row = (name: string, description: string): ProgrammaticSkill => ({
  name,
  description,
  instructions: 'From a row.',
});

describe(SkillRegistry.name, () => {
  let tree: TempTree;
  beforeEach(() => {
    tree = tempTree('skillhost-registry-');
    writeSkill(tree, 'skills', 'pdf', { description: 'The folder PDF skill.' });
    writeSkill(tree, 'skills', 'git', { description: 'The folder git skill.' });
  });
  afterEach(() => tree.cleanup());

  const build = (...sources: SkillSource[]) =>
    new SkillRegistry(settingsFor(tree.path('skills')), undefined, undefined, undefined, sources);
  const descriptions = (sut: SkillRegistry) =>
    Object.fromEntries([...sut.snapshot.skills.values()].map((skill) => [skill.name, skill.description]));

  it("offers an app's own source beside the folders; at equal precedence it shadows a folder skill", async () => {
    const sut = build(databaseSource([row('pdf', 'The database PDF skill.'), row('notes', 'Notes from rows.')]).source);

    await sut.init();

    expect(descriptions(sut)).toEqual({
      git: 'The folder git skill.',
      notes: 'Notes from rows.',
      pdf: 'The database PDF skill.',
    });
    expect(sut.snapshot.collisions).toEqual([
      {
        name: 'pdf',
        winner: { path: 'programmatic:user/pdf', source: 'programmatic:user' },
        loser: { path: tree.path('skills', 'pdf'), source: tree.path('skills') },
      },
    ]);
  });

  it('lets a registered workspace skill shadow it, and a source of higher precedence shadow that', async () => {
    const sut = build(databaseSource([row('pdf', 'The database PDF skill.')]).source);
    await sut.init();
    sut.register({ name: 'pdf', description: 'The registered PDF skill.', instructions: 'In memory.' });
    expect(sut.get('pdf').description).toBe('The registered PDF skill.');

    const high = build(databaseSource([row('pdf', 'The database PDF skill.')], 1).source);
    await high.init();
    high.register({ name: 'pdf', description: 'The registered PDF skill.', instructions: 'In memory.' });
    expect(high.get('pdf').description).toBe('The database PDF skill.');
  });

  it('leaves a source of precedence -1 shadowed by the folders', async () => {
    const sut = build(databaseSource([row('pdf', 'The database PDF skill.')], -1).source);
    await sut.init();
    expect(sut.get('pdf').description).toBe('The folder PDF skill.');
  });

  it('reads the source again on each reload; when it fails, the catalogue stays as it was', async () => {
    const rows = [row('notes', 'Notes from rows.')];
    const database = databaseSource(rows);
    const errors: string[] = [];
    const logger = { ...SILENT_LOGGER, error: (message: string) => void errors.push(message) };
    const sut = new SkillRegistry(settingsFor(tree.path('skills')), undefined, undefined, logger, [database.source]);
    await sut.init();
    rows.push(row('todo', 'A todo list.'));

    await sut.reload();
    expect(Object.keys(descriptions(sut))).toEqual(['git', 'notes', 'pdf', 'todo']);
    expect(database.state.loads).toBe(2);

    const before = sut.snapshot;
    database.state.failure = new Error('database down');
    await expect(sut.reload()).rejects.toThrow('database down');
    expect(sut.snapshot).toBe(before);
    expect(errors).toEqual(["Skill source 'database' could not be read: database down"]);
  });

  // Regression, fixed since a review pass found it. Was: the folders' new contents, read before the database failed,
  // were published by the next registration beside the database's old ones.
  it('a failed reload leaves every source as it was for the next swap, the folders read before it too', async () => {
    const database = databaseSource([row('notes', 'Notes from rows.')]);
    const sut = build(database.source);
    await sut.init();
    writeSkill(tree, 'skills', 'pdf', { description: 'The PDF skill, edited.' });
    database.state.failure = new Error('database down');
    await expect(sut.reload()).rejects.toThrow('database down');

    sut.register({ name: 'todo', description: 'A todo list.', instructions: 'Steps.' });

    expect(descriptions(sut)).toMatchObject({
      pdf: 'The folder PDF skill.',
      notes: 'Notes from rows.',
      todo: 'A todo list.',
    });
  });

  it('starts straight through (no promise) when every source answers at once', () => {
    const sut = build({
      name: 'constant',
      load: () => ({ skills: [programmaticSkillRecord(row('x', 'X.'), 'user')] }),
    });
    expect(sut.init()).toBeUndefined();
    expect(Object.keys(descriptions(sut))).toEqual(['git', 'pdf', 'x']);
  });

  it("answers a user's view straight through (no promise) while no skill is shared with groups", async () => {
    const sut = build();
    await sut.init();

    const view = sut.userViewNow('ann');

    expect(view).not.toBeInstanceOf(Promise);
    expect(view).toBe(sut.snapshot);
    expect([...(view as typeof sut.snapshot).skills.keys()]).toEqual(['git', 'pdf']);
    expect(await sut.userView('ann')).toBe(view);
  });
});
