import { describe, expect, it } from '@jest/globals';
import { buildSnapshot, chooseCatalogue, NO_COMMANDS, type SkillRecord } from '@skillhost/core';
import { instructionsSummary, mcpInstructions, mcpTools } from './mcp-tools.js';

function record(name: string, description: string): SkillRecord {
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

function viewOf(count: number, includeLocation = false) {
  const skills = Array.from({ length: count }, (_, i) =>
    record(`skill-${String(i).padStart(3, '0')}`, `Does task ${i} of the team. Use when the user asks for task ${i}.`),
  );
  return buildSnapshot(
    { skills, invalid: [], collisions: [], excluded: [], warnings: [], directories: [] },
    { validation: 'standard', includeLocation, catalogueFormat: 'json' },
    { scannedAt: new Date(0), durationMs: 0 },
    NO_COMMANDS,
  );
}

const choose = (count: number, budgetTokens = 4000, popularity = new Map<string, number>()) =>
  chooseCatalogue(
    viewOf(count),
    { budgetTokens, maxSkills: 1000, format: 'markdown' },
    { message: '', popularity, searchable: true, searchToolName: 'search_skills', fill: true },
  );

describe('the MCP catalogue', () => {
  it('lists every skill in name order while they fit, and offers no search tool', () => {
    const sut = choose(5);
    expect(sut.complete).toBe(true);
    const tools = mcpTools(viewOf(5), sut, false);
    expect(tools.map((tool) => tool.wireName)).toEqual(['activate_team_skill', 'read_skill_file']);
    expect(tools[0].description.split('\n').filter((line) => line.startsWith('- '))).toEqual(
      Array.from(
        { length: 5 },
        (_, i) => `- skill-00${i}: Does task ${i} of the team. Use when the user asks for task ${i}.`,
      ),
    );
  });

  it(
    'past the budget: the most used first, then the rest in name order while whole entries fit, and a note naming ' +
      'search_skills',
    () => {
      const sut = choose(
        300,
        500,
        new Map([
          ['skill-250', 9],
          ['skill-100', 3],
        ]),
      );
      expect(sut.complete).toBe(false);
      expect(sut.listed.slice(0, 3)).toEqual(['skill-250', 'skill-100', 'skill-000']);
      expect(sut.tokens).toBeLessThanOrEqual(500);
      expect(sut.text.split('\n').at(-1)).toBe(
        `(${300 - sut.listed.length} more skills are not listed here: find them with the search_skills tool when ` +
          `no listed skill fits the task.)`,
      );
      expect(mcpTools(viewOf(300), sut, false).map((tool) => tool.wireName)).toEqual([
        'activate_team_skill',
        'read_skill_file',
        'search_skills',
      ]);
    },
  );

  it.each([
    [5, 4000],
    [300, 500],
  ])(
    "never shows the server's SKILL.md paths, even with include_location on (%i skills, budget %i)",
    (count, budgetTokens) => {
      const view = viewOf(count, true);
      const request = {
        message: '',
        popularity: new Map<string, number>(),
        searchable: true,
        searchToolName: 'search_skills',
        fill: true,
      };
      const limits = { budgetTokens, maxSkills: 1000, format: 'markdown' as const };
      // The chats' catalogue shows them (the model there may read the files)…
      expect(chooseCatalogue(view, limits, request).text).toContain('(file: /s/skill-000/SKILL.md)');
      // …MCP's does not: the client is on another machine.
      const sut = chooseCatalogue(view, limits, { ...request, hideLocations: true });
      expect(sut.text).not.toContain('/s/');
      expect(sut.text).toContain('- skill-000: Does task 0 of the team. Use when the user asks for task 0.');
      expect(mcpInstructions(sut, 4096)).not.toContain('/s/');
    },
  );

  it('offers search_skills with a complete catalogue when search_tool is "always"', () => {
    expect(mcpTools(viewOf(2), choose(2), true).map((tool) => tool.wireName)).toContain('search_skills');
  });
});

describe('mcpInstructions', () => {
  it('starts with a line of its own under 240 characters, then lists the whole catalogue when it fits', () => {
    const sut = mcpInstructions(choose(3), 4096);
    expect(sut.split('\n')[0]).toBe(
      "This team's Agent Skills (skill-000, skill-001, skill-002): instructions to follow when a task matches a " +
        "skill; activate_team_skill lists them and returns one's instructions.",
    );
    expect(sut).toContain(
      'Available skills:\n- skill-000: Does task 0 of the team. Use when the user asks for task 0.\n- skill-001',
    );
    expect(sut.endsWith('- skill-002: Does task 2 of the team. Use when the user asks for task 2.')).toBe(true);
  });

  it.each([1024, 1500, 4096])(
    'keeps within %i characters with whole entries, and says where the rest are',
    (maxChars) => {
      const catalogue = choose(100);
      expect(catalogue.complete).toBe(true);
      const sut = mcpInstructions(catalogue, maxChars);
      expect(sut.length).toBeLessThanOrEqual(maxChars);
      const entries = sut.split('\n').filter((line) => line.startsWith('- '));
      for (const entry of entries)
        expect(entry).toMatch(/^- skill-\d{3}: Does task \d+ of the team\. Use when the user asks for task \d+\.$/);
      expect(sut.split('\n').at(-1)).toBe(
        `(${100 - entries.length} more skills are listed in activate_team_skill's description.)`,
      );
    },
  );

  it(
    'ends a partial catalogue with its own note when every listed entry fits, and names both places when some do ' +
      'not',
    () => {
      const partial = choose(300, 500);
      expect(mcpInstructions(partial, 100_000).split('\n').at(-1)).toContain('find them with the search_skills tool');
      expect(mcpInstructions(partial, 1024).split('\n').at(-1)).toMatch(
        new RegExp(
          "^\\(\\d+ more skills are listed in activate_team_skill's description; \\d+ more are found " +
            'with search_skills\\.\\)$',
        ),
      );
    },
  );

  it('names in its first line as many skills as fit in 239 characters, whole names only', () => {
    const sut = instructionsSummary(choose(100).listed);
    expect(sut.length).toBeLessThanOrEqual(239);
    expect(sut).toMatch(/^This team's Agent Skills \(skill-000, skill-001, (skill-\d{3}, )+…\): instructions/);
    expect(instructionsSummary([])).toBe(
      "This team's Agent Skills: instructions to follow when a task matches a skill; activate_team_skill lists " +
        "them and returns one's instructions.",
    );
    expect(instructionsSummary(['x'.repeat(200)])).toBe(
      "This team's Agent Skills (…): instructions to follow when a task matches a skill; activate_team_skill " +
        "lists them and returns one's instructions.",
    );
  });

  it('with no skills says so', () => {
    expect(mcpInstructions(choose(0), 4096).endsWith('No skills are available.')).toBe(true);
  });
});
