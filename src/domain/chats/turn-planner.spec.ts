import { describe, expect, it } from '@jest/globals';
import {
  AppError,
  buildSnapshot,
  CatalogueChooser,
  type CatalogueSnapshot,
  type CommandRecord,
  ErrorCode,
  type SkillRecord,
  toolStyleFor,
} from '@skillhost/core';
import { MAX_COMMAND_PROMPT_CHARS, type TurnPlanInput, TurnPlanner, type TurnPlanSettings } from './turn-planner.js';

function skill(name: string, description: string): SkillRecord {
  return {
    name,
    description,
    path: `/s/${name}`,
    skillFile: `/s/${name}/SKILL.md`,
    source: '/s',
    frontmatter: { name, description },
    warnings: [],
  };
}

function command(name: string, template: string, requiredSkills: string[]): CommandRecord {
  return {
    name,
    description: `Runs ${name}.`,
    argumentHint: '<what>',
    requiredSkills,
    template,
    path: `/c/${name}.md`,
    source: '/c',
    warnings: [],
  };
}

const SKILLS = [
  skill('pdf', 'Extract text and tables from PDF files, fill PDF forms.'),
  skill('docx', 'Create and edit Word documents.'),
  skill('xlsx', 'Spreadsheets: formulas, charts, pivot tables.'),
  skill('git-commit', 'Write a commit message for the staged changes.'),
];

function viewOf(skills: SkillRecord[] = SKILLS, commands: CommandRecord[] = []): CatalogueSnapshot {
  return buildSnapshot(
    { skills, invalid: [], collisions: [], excluded: [], warnings: [], directories: [] },
    { validation: 'standard', includeLocation: false, catalogueFormat: 'json' },
    { scannedAt: new Date(0), durationMs: 0 },
    { commands, invalid: [], collisions: [], warnings: [], directories: [] },
  );
}

function plannerWith(
  overrides: { settings?: Partial<TurnPlanSettings>; budgetTokens?: number; maxSkills?: number } = {},
): TurnPlanner {
  const settings: TurnPlanSettings = {
    basePrompt: 'You are helpful.',
    explicitPrefixes: ['/', '$'],
    skills: { catalogueFormat: 'json', includeLocation: false },
    toolsEnabled: true,
    ...overrides.settings,
  };
  const chooser = new CatalogueChooser({
    catalogueBudgetTokens: overrides.budgetTokens ?? 4000,
    catalogueMaxSkills: overrides.maxSkills ?? 50,
    catalogueFormat: 'json',
    searchTool: 'auto',
  });
  const style = (view: CatalogueSnapshot) =>
    toolStyleFor('skillhost', view, {
      scripts: false,
      search: chooser.offersSearch(view),
      partial: !chooser.isComplete(view),
    });
  return new TurnPlanner(settings, chooser, style);
}

function input(content: string, overrides: Partial<TurnPlanInput> = {}): TurnPlanInput {
  return { content, view: viewOf(), model: { tools: true }, activated: [], history: [], ...overrides };
}

describe(TurnPlanner.name, () => {
  describe('reading the message', () => {
    it("takes a plain message as the user's words, asking for no skill", () => {
      const plan = plannerWith().plan(input('How do I split a PDF?'));
      expect(plan.invocation).toEqual({ skills: [], command: null, text: 'How do I split a PDF?' });
      expect(plan.requested).toEqual([]);
      expect(plan.prompt).toBe('How do I split a PDF?');
      expect(plan.command).toBeUndefined();
    });

    it('requests each skill invoked with a configured prefix, in order, and strips them from the words', () => {
      const plan = plannerWith().plan(input('/pdf $docx turn this into a memo'));
      expect(plan.invocation.skills).toEqual(['pdf', 'docx']);
      expect(plan.requested).toEqual([
        { skillName: 'pdf', how: 'explicit' },
        { skillName: 'docx', how: 'explicit' },
      ]);
      expect(plan.prompt).toBe('turn this into a memo');
    });

    it('leaves an unknown name, or a prefix that is not configured, as ordinary text', () => {
      expect(plannerWith().plan(input('/etc/hosts is a file')).requested).toEqual([]);
      expect(plannerWith({ settings: { explicitPrefixes: ['/'] } }).plan(input('$pdf split it')).prompt).toBe(
        '$pdf split it',
      );
    });

    it('reads nothing as an invocation while skills are off', () => {
      const plan = plannerWith().plan(input('/pdf split it', { view: undefined }));
      expect(plan.requested).toEqual([]);
      expect(plan.prompt).toBe('/pdf split it');
    });

    it(
      'runs a command: its template expanded as the prompt, its required skills requested, what is stored with ' +
        'the message',
      () => {
        const view = viewOf(SKILLS, [
          command('review', 'Review pull request $ARGUMENTS carefully.', ['git-commit', 'pdf']),
        ]);
        const plan = plannerWith().plan(input('/review 42', { view }));
        expect(plan.prompt).toBe('Review pull request 42 carefully.');
        expect(plan.requested).toEqual([
          { skillName: 'git-commit', how: 'command' },
          { skillName: 'pdf', how: 'command' },
        ]);
        expect(plan.command?.stored).toEqual({
          name: 'review',
          arguments: '42',
          prompt: 'Review pull request 42 carefully.',
        });
      },
    );

    it('refuses a command whose arguments expand past the limit, saying what to do', () => {
      const view = viewOf(SKILLS, [command('echo', '$ARGUMENTS $ARGUMENTS $ARGUMENTS', [])]);
      const read = () => plannerWith().readMessage(`/echo ${'x'.repeat(MAX_COMMAND_PROMPT_CHARS / 2)}`, view);
      let thrown: unknown;
      try {
        read();
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(AppError);
      expect((thrown as AppError).code).toBe(ErrorCode.VALIDATION_FAILED);
      expect((thrown as AppError).message).toMatch(/send shorter arguments/);
    });
  });

  describe('gating the tools', () => {
    it(
      "offers the style's tools when skills and tools are on, the model calls tools and the request did " +
        'not say no',
      () => {
        const plan = plannerWith().plan(input('hi'));
        expect(plan.toolsAvailable).toBe(true);
        expect(plan.style?.definitions.map((tool) => tool.name)).toEqual([
          'skills.activate',
          'skills.readResource',
          'skills.listResources',
        ]);
      },
    );

    it.each([
      ['the request says no', { tools: false }, {}],
      ['the model cannot call tools', { model: { tools: false } }, {}],
      ['skills are off', { view: undefined }, {}],
      ['tools are off in the configuration', {}, { toolsEnabled: false }],
    ])('offers none when %s', (_reason, overrides: Partial<TurnPlanInput>, settings: Partial<TurnPlanSettings>) => {
      const plan = plannerWith({ settings }).plan(input('hi', overrides));
      expect(plan.toolsAvailable).toBe(false);
      expect(plan.style).toBeUndefined();
    });

    it('offers tools to a turn with no model known yet (the context of a server without one)', () => {
      expect(plannerWith().plan(input('hi', { model: undefined })).toolsAvailable).toBe(true);
    });
  });

  describe('choosing the catalogue', () => {
    it('lists every skill, whatever the message, when they fit the budget, and ranks with no history then', () => {
      const sut = plannerWith();
      const plan = sut.plan(input('spreadsheet formulas', { history: [{ content: 'earlier about PDFs' }] }));
      const { catalogue } = sut.systemPrompt(plan);
      expect(catalogue).toMatchObject({ complete: true, listed: ['docx', 'git-commit', 'pdf', 'xlsx'], unlisted: 0 });
      expect(plan.ranking.context).toBe('');
    });

    it('lists the activated and requested skills first, then the best ranked for the message, within the limit', () => {
      const sut = plannerWith({ maxSkills: 3 });
      const plan = sut.plan(input('/docx pivot tables in a spreadsheet', { activated: ['git-commit'] }));
      const { catalogue } = sut.systemPrompt(plan);
      expect(catalogue).toMatchObject({ complete: false, listed: ['git-commit', 'docx', 'xlsx'], unlisted: 1 });
      expect(plan.ranking).toEqual({ text: 'pivot tables in a spreadsheet', context: '', requested: ['docx'] });
    });

    it('ranks a partial catalogue with the last four messages, newest first, as weaker context', () => {
      const history = ['one', 'two', 'three', 'four', 'five'].map((content) => ({ content }));
      const plan = plannerWith({ maxSkills: 2 }).plan(input('hi', { history }));
      expect(plan.ranking.context).toBe('five\nfour\nthree\ntwo');
    });

    it('lists none with skills off', () => {
      const sut = plannerWith();
      expect(sut.systemPrompt(sut.plan(input('hi', { view: undefined })))).toEqual({ system: 'You are helpful.' });
    });

    it("previews a new chat's catalogue for a message, the invoked skills pinned, in the format asked for", () => {
      const text = plannerWith({ maxSkills: 2 }).previewCatalogue(
        viewOf(),
        '$git-commit spreadsheet charts',
        { tools: true },
        'markdown',
      );
      expect(text).toContain('- git-commit: Write a commit message');
      expect(text).toContain('- xlsx: Spreadsheets');
      expect(text).not.toContain('- pdf:');
    });
  });

  describe('the prompt', () => {
    it("tells the model how to use the style's tools and lists the commands", () => {
      const view = viewOf(SKILLS, [command('review', 'Review $ARGUMENTS.', ['pdf'])]);
      const sut = plannerWith();
      const { system } = sut.systemPrompt(sut.plan(input('hi', { view })));
      expect(system.startsWith('You are helpful.\n\n## Skills')).toBe(true);
      expect(system).toContain('activate it with the skills_activate tool');
      expect(system).toContain('/review');
      expect(system).toContain('"name":"pdf"');
    });

    it("without tools, carries the requested skills' instructions and what a code skill answered", () => {
      const sut = plannerWith();
      const plan = sut.plan(input('/pdf split it', { tools: false }));
      const { system } = sut.systemPrompt(plan, {
        fallback: [{ name: 'pdf', body: 'PDF-BODY-MARKER' }],
        ran: [{ name: 'pdf', output: 'RAN-OUTPUT-MARKER' }],
      });
      expect(system).toContain('PDF-BODY-MARKER');
      expect(system).toContain('RAN-OUTPUT-MARKER');
      expect(system).toContain('Tools are not available in this conversation');
      expect(system).not.toContain('skills_activate tool');
    });

    it('is the same bytes for the same inputs', () => {
      const sut = plannerWith();
      const twice = [0, 1].map(
        () => sut.systemPrompt(sut.plan(input('/pdf split it', { activated: ['docx'] }))).system,
      );
      expect(twice[0]).toBe(twice[1]);
    });
  });
});
