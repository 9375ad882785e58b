import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ConfigError, programmaticSkillRecord, type SkillSource, type SkillSourceContent } from '@skillhost/core';
import { type TempTree, tempTree, writeSkill } from '../../../test/support/files/skill-tree.js';
import { SkillRegistryService } from './skill-registry.service.js';
import { SkillsModule } from './skills.module.js';

/** An app's own source as a provider of its own (it would inject its database). */
@Injectable()
class NotesSource implements SkillSource {
  readonly name = 'notes';
  load(): SkillSourceContent {
    const record = programmaticSkillRecord(
      { name: 'notes', description: 'Notes.', instructions: 'Read them.' },
      'user',
    );
    return { skills: [record] };
  }
}

@Module({ providers: [NotesSource], exports: [NotesSource] })
class NotesModule {}

describe(SkillsModule.name, () => {
  let tree: TempTree;
  beforeEach(() => {
    tree = tempTree('skillhost-nest-module-');
    writeSkill(tree, 'skills', 'pdf');
  });
  afterEach(() => tree.cleanup());

  async function namesWith(imported: ReturnType<typeof SkillsModule.forRoot>): Promise<string[]> {
    const moduleRef = await Test.createTestingModule({ imports: [imported] }).compile();
    await moduleRef.init();
    const names = [...moduleRef.get(SkillRegistryService).snapshot.skills.keys()];
    await moduleRef.close();
    return names;
  }

  it('forRoot merges the sources it is given with the folders', async () => {
    const imported = SkillsModule.forRoot({ directories: [tree.path('skills')], sources: [new NotesSource()] });
    expect(await namesWith(imported)).toEqual(['notes', 'pdf']);
  });

  it("forRootAsync takes sources its factory injects from the app's providers", async () => {
    const imported = SkillsModule.forRootAsync({
      imports: [NotesModule],
      inject: [NotesSource],
      useFactory: (notes: NotesSource) => ({ directories: [tree.path('skills')], sources: [notes] }),
    });
    expect(await namesWith(imported)).toEqual(['notes', 'pdf']);
  });

  it.each([
    ['without load()', { name: 'broken' }],
    ['with a precedence that is not a number', { name: 'nan', precedence: Number.NaN, load: () => ({ skills: [] }) }],
  ])('refuses sources that are not SkillSources (%s), naming the option', async (_, source) => {
    const imported = SkillsModule.forRoot({ directories: [tree.path('skills')], sources: [source as SkillSource] });
    const failure = await namesWith(imported).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ConfigError);
    expect((failure as ConfigError).problems).toEqual([
      'SkillsModule option `sources` must be a list of SkillSource objects, each with a name, a load() method and, ' +
        'if any, a finite precedence',
    ]);
  });
});
