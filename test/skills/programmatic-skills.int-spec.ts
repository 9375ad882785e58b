import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { AppError, type CodeSkillContext, ErrorCode } from '@skillhost/core';
import { configWith } from '../../src/config/config-loader.js';
import { CodeSkillService } from '../../src/domain/skills/code/code-skill.service.js';
import { SkillRegistryService, SkillResourcesService } from '@skillhost/nest';
import { tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import { skillsSettingsOf } from '../../src/domain/skills/skills-settings-of.js';

async function failure(work: () => unknown): Promise<{ code: ErrorCode; message: string }> {
  try {
    await work();
  } catch (error) {
    if (AppError.isInstance(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected an AppError');
}

const RELEASE_NOTES = {
  name: 'release-notes',
  description: 'Writes release notes from merged pull requests.',
  instructions: '# Release notes\n\nRead references/style.md, then list the changes.\n',
  resources: {
    'references/style.md': 'STYLE-MARKER',
    'assets/template.md': '## {version}',
    'scripts/collect.sh': 'echo',
  },
};

describe(`${SkillRegistryService.name}: programmatic skills`, () => {
  let tree: TempTree;
  let registry: SkillRegistryService;
  let resources: SkillResourcesService;
  let code: CodeSkillService;

  function build(overrides: Record<string, unknown> = {}, init = true) {
    const config = configWith({
      'app.skills.enabled': true,
      'app.skills.directories': [tree.path('skills')],
      'app.skills.settings.greeter': { greeting: 'Hej' },
      ...overrides,
    });
    registry = new SkillRegistryService(skillsSettingsOf(config));
    if (init) void registry.onModuleInit(); // no store: the first scan is done before it returns
    resources = new SkillResourcesService(registry, skillsSettingsOf(config));
    code = new CodeSkillService(config);
  }

  beforeEach(() => {
    tree = tempTree();
    writeSkill(tree, 'skills', 'pdf', { description: 'Works with PDF files (folder).', body: 'FOLDER-BODY' });
    build();
  });
  afterEach(() => tree.cleanup());

  it('swaps in a new snapshot with the skill at once; one taken before stays as it was', () => {
    const before = registry.snapshot;
    const record = registry.register(RELEASE_NOTES);
    expect(record).toMatchObject({
      name: 'release-notes',
      origin: 'programmatic',
      scope: 'workspace',
      source: 'programmatic:workspace',
    });
    expect(registry.snapshot).not.toBe(before);
    expect([...before.skills.keys()]).toEqual(['pdf']);
    expect([...registry.snapshot.skills.keys()]).toEqual(['pdf', 'release-notes']);
    expect(registry.snapshot.catalogue('markdown')).toBe(
      '- pdf: Works with PDF files (folder).\n- release-notes: Writes release notes from merged pull requests.',
    );
    expect(registry.snapshot.scannedAt).toBe(before.scannedAt);
  });

  describe('an instruction skill, served from memory', () => {
    beforeEach(() => {
      registry.register(RELEASE_NOTES, 'user');
    });

    it('activates with its instructions', async () => {
      expect(await resources.activate('release-notes')).toEqual({
        name: 'release-notes',
        frontmatter: { name: 'release-notes', description: 'Writes release notes from merged pull requests.' },
        body: '# Release notes\n\nRead references/style.md, then list the changes.',
        truncated: false,
      });
    });

    it('lists and reads its files as a folder skill does, with the same errors', async () => {
      expect(await resources.listResources('release-notes')).toEqual({
        files: [
          { path: 'assets/template.md', size: 12 },
          { path: 'references/style.md', size: 12 },
          { path: 'scripts/collect.sh', size: 4 },
        ],
        truncated: false,
      });
      expect((await resources.listResources('release-notes', 'references')).files).toEqual([
        { path: 'references/style.md', size: 12 },
      ]);
      expect(await resources.readResource('release-notes', './references//style.md')).toEqual({
        name: 'release-notes',
        path: 'references/style.md',
        content: 'STYLE-MARKER',
        truncated: false,
      });
      expect(await failure(() => resources.readResource('release-notes', 'references/missing.md'))).toEqual({
        code: ErrorCode.RESOURCE_NOT_FOUND,
        message:
          "Resource 'references/missing.md' not found in skill 'release-notes'. Available: assets/template.md, " +
          'references/style.md, scripts/collect.sh',
      });
      expect(await failure(() => resources.readResource('release-notes', 'references'))).toMatchObject({
        code: ErrorCode.RESOURCE_IS_DIRECTORY,
      });
      expect(await failure(() => resources.readResource('release-notes', '../pdf/SKILL.md'))).toMatchObject({
        code: ErrorCode.RESOURCE_OUTSIDE_SKILL,
      });
    });

    it('cuts instructions and files past the configured limits, as on disk', async () => {
      build({ 'app.skills.max_skill_md_bytes': 1024, 'app.skills.max_resource_bytes': 1024 });
      registry.register({
        ...RELEASE_NOTES,
        instructions: 'i'.repeat(3000),
        resources: { 'big.md': 'b'.repeat(2000) },
      });
      expect(await resources.activate('release-notes')).toMatchObject({
        body: `${'i'.repeat(1024)}\n\n[Truncated: showing the first 1024 of 3000 bytes of SKILL.md.]`,
        truncated: true,
      });
      expect(await resources.readResource('release-notes', 'big.md')).toMatchObject({
        content: `${'b'.repeat(1024)}\n\n[Truncated: showing the first 1024 of 2000 bytes of big.md.]`,
        truncated: true,
      });
    });
  });

  describe('precedence (bundled < user < workspace; folder skills are user)', () => {
    const programmaticPdf = {
      name: 'pdf',
      description: 'Works with PDF files (programmatic).',
      instructions: 'PROGRAMMATIC-BODY',
    };

    it('a bundled skill does not shadow a folder skill', async () => {
      registry.register(programmaticPdf, 'bundled');
      expect((await resources.activate('pdf')).body).toBe('FOLDER-BODY');
      expect(registry.snapshot.collisions).toEqual([
        {
          name: 'pdf',
          winner: { path: tree.path('skills/pdf'), source: tree.path('skills') },
          loser: { path: 'programmatic:bundled/pdf', source: 'programmatic:bundled' },
        },
      ]);
    });

    it('a workspace skill shadows it until it is unregistered, which restores the folder skill', async () => {
      registry.register(programmaticPdf, 'bundled');
      registry.register(programmaticPdf, 'workspace');
      expect((await resources.activate('pdf')).body).toBe('PROGRAMMATIC-BODY');
      expect(registry.snapshot.catalogue('markdown')).toBe('- pdf: Works with PDF files (programmatic).');
      expect(registry.snapshot.directories[0]).toMatchObject({ skills: 0 });
      expect(registry.unregister('pdf', 'workspace')).toBe(true);
      expect((await resources.activate('pdf')).body).toBe('FOLDER-BODY');
      expect(registry.snapshot.directories[0]).toMatchObject({ skills: 1 });
      expect(registry.unregister('pdf')).toBe(true);
      expect(registry.snapshot.collisions).toEqual([]);
    });

    it('registering a name again at the same scope replaces it', async () => {
      registry.register({ ...programmaticPdf, instructions: 'FIRST' }, 'workspace');
      registry.register({ ...programmaticPdf, instructions: 'SECOND' }, 'workspace');
      expect((await resources.activate('pdf')).body).toBe('SECOND');
      expect(registry.unregister('pdf', 'workspace')).toBe(true);
      expect((await resources.activate('pdf')).body).toBe('FOLDER-BODY');
    });
  });

  it('unregistering a name that is not registered changes nothing', () => {
    const before = registry.snapshot;
    expect(registry.unregister('pdf')).toBe(false);
    expect(registry.unregister('release-notes', 'user')).toBe(false);
    expect(registry.snapshot).toBe(before);
  });

  it('keeps programmatic skills across a reload, and includes those registered before the first scan', async () => {
    build({}, false);
    registry.register(RELEASE_NOTES);
    await registry.onModuleInit();
    expect([...registry.snapshot.skills.keys()]).toEqual(['pdf', 'release-notes']);
    writeSkill(tree, 'skills', 'added');
    expect([...(await registry.reload()).skills.keys()]).toEqual(['added', 'pdf', 'release-notes']);
  });

  it('refuses an invalid skill with VALIDATION_FAILED naming every problem, and keeps the snapshot', async () => {
    const before = registry.snapshot;
    expect(await failure(() => registry.register({ name: 'Release Notes', description: '' }))).toEqual({
      code: ErrorCode.VALIDATION_FAILED,
      message:
        "Programmatic skill 'Release Notes' cannot be registered: Skill name 'Release Notes' must be lowercase; " +
        "Skill name 'Release Notes' contains invalid characters. Only letters, digits, and hyphens are " +
        "allowed.; Field 'description' must be a non-empty string; give 'instructions' (an instruction skill), " +
        "'execute' (a code skill), or both.",
    });
    expect(registry.snapshot).toBe(before);
  });

  it('leaves out a programmatic skill whose tools_required the chats lack', () => {
    registry.register({ ...RELEASE_NOTES, toolsRequired: ['shell'] });
    expect([...registry.snapshot.skills.keys()]).toEqual(['pdf']);
    expect(registry.snapshot.unavailable).toEqual([
      expect.objectContaining({
        name: 'release-notes',
        path: 'programmatic:workspace/release-notes',
        source: 'programmatic:workspace',
        missingTools: ['shell'],
      }),
    ]);
  });

  describe('a code skill, run in-process', () => {
    it('gets the same ctx as a skill.mjs, with its settings, and its result is checked the same way', async () => {
      const llmCalls: string[] = [];
      let seen: Omit<CodeSkillContext, 'llm' | 'tools'> | undefined;
      const skill = registry.register({
        name: 'greeter',
        description: 'Greets people by name.',
        async execute(ctx) {
          const { llm: _, tools: __, ...data } = ctx;
          seen = data;
          const name = await ctx.llm.complete(`Extract the name: ${ctx.input}`);
          const tool = await ctx.tools.call('skills.activate', { name: 'pdf' });
          return {
            success: true,
            output: `${ctx.config.greeting} ${name} (${tool.status})`,
            promptInjection: 'Be warm.',
          };
        },
        canHandle: (query) => (query.startsWith('greet') ? 2 : 0),
      });
      const result = await code.run(skill, {
        input: 'greet Ada',
        userMessage: 'please greet Ada',
        chatId: 'chat-7',
        llm: async (prompt) => {
          llmCalls.push(prompt);
          return 'Ada';
        },
        callTool: async () => ({ status: 'ok', output: 'body' }),
      });
      expect(seen).toEqual({
        input: 'greet Ada',
        userMessage: 'please greet Ada',
        chatId: 'chat-7',
        config: { greeting: 'Hej' },
      });
      expect(llmCalls).toEqual(['Extract the name: greet Ada']);
      expect(result).toEqual({
        success: true,
        output: 'Hej Ada (ok)',
        promptInjection: 'Be warm.',
        durationMs: expect.any(Number),
      });
      expect(await code.score(skill, 'greet Bob')).toBe(1);
      expect(await resources.activate('greeter')).toMatchObject({ body: 'Greets people by name.' });
    });

    it('turns its throw into an error result', async () => {
      const skill = registry.register({
        name: 'broken',
        description: 'Always fails.',
        execute: async () => {
          throw new Error('upstream is down');
        },
      });
      expect(
        await code.run(skill, {
          input: '',
          userMessage: '',
          chatId: 'c',
          llm: async () => '',
          callTool: async () => ({ status: 'ok', output: '' }),
        }),
      ).toMatchObject({
        success: false,
        output: '',
        error: 'The code skill failed: execute() threw Error: upstream is down',
      });
    });
  });
});
