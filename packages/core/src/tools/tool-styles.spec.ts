import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { TOOL_STYLES } from '../options/skills-options.schema.js';
import { buildSnapshot, type CatalogueSnapshot } from '../catalogue/catalogue-snapshot.js';
import { NO_COMMANDS } from '../commands/command-discovery.js';
import type { SkillRecord } from '../skill/skill.types.js';
import { defineTool, inputJsonSchema, parseToolArguments, readsSkills, textArgument } from './skill-tool.js';
import { activateTool, listResourcesTool, readResourceTool } from './skillhost-tools.js';
import { KNOWN_TOOL_NAMES, toolStyleFor } from './tool-styles.js';

function snapshotOf(...names: string[]): CatalogueSnapshot {
  const skills = names.map(
    (name): SkillRecord => ({
      name,
      description: `Does ${name} things.\nTwo lines.`,
      path: `/s/${name}`,
      skillFile: `/s/${name}/SKILL.md`,
      source: '/s',
      frontmatter: { name, description: name },
      warnings: [],
    }),
  );
  return buildSnapshot(
    { skills, invalid: [], collisions: [], excluded: [], warnings: [], directories: [] },
    { validation: 'standard', includeLocation: false, catalogueFormat: 'json' },
    { scannedAt: new Date(0), durationMs: 0 },
    NO_COMMANDS,
  );
}

describe(parseToolArguments.name, () => {
  it('accepts the documented arguments', () => {
    expect(parseToolArguments(activateTool, { name: 'pdf' })).toEqual({ ok: true, input: { name: 'pdf' } });
    expect(parseToolArguments(listResourcesTool, { name: 'pdf', type: 'scripts' })).toEqual({
      ok: true,
      input: { name: 'pdf', type: 'scripts' },
    });
  });

  it('explains what is wrong and what was expected, field problems before unknown arguments', () => {
    expect(parseToolArguments(activateTool, 'pdf')).toEqual({
      ok: false,
      message: 'Arguments must be a JSON object like {"name": "<skill>"}.',
      problems: ['Arguments must be a JSON object like {"name": "<skill>"}.'],
    });
    expect(parseToolArguments(activateTool, [])).toMatchObject({
      ok: false,
      message: 'Arguments must be a JSON object like {"name": "<skill>"}.',
    });
    expect(parseToolArguments(activateTool, { skill: 'pdf' })).toEqual({
      ok: false,
      message:
        "Invalid arguments for skills.activate: 'name' must be a non-empty string; unknown argument(s): " +
        'skill. Expected {"name": "<skill>"}.',
      problems: ["'name' must be a non-empty string", 'unknown argument(s): skill'],
    });
    expect(parseToolArguments(readResourceTool, { name: 'pdf', path: 3 })).toMatchObject({
      message:
        'Invalid arguments for skills.readResource: \'path\' must be a non-empty string. Expected {"name": ' +
        '"<skill>", "path": "references/REFERENCE.md"}.',
    });
    expect(parseToolArguments(activateTool, { name: '   ' })).toMatchObject({
      problems: ["'name' must be a non-empty string"],
    });
  });

  it('holds the limits the JSON Schema states', () => {
    expect(parseToolArguments(activateTool, { name: 'n'.repeat(200) }).ok).toBe(true);
    expect(parseToolArguments(activateTool, { name: 'n'.repeat(201) })).toMatchObject({
      problems: ["'name' must be at most 200 characters"],
    });
    expect(inputJsonSchema(activateTool)).toEqual({
      type: 'object',
      properties: {
        name: { type: 'string', maxLength: 200, description: 'The skill name, exactly as listed in the catalogue.' },
      },
      required: ['name'],
      additionalProperties: false,
    });
    expect(parseToolArguments(readResourceTool, { name: 'pdf', path: 'p'.repeat(4097) })).toMatchObject({
      problems: ["'path' must be at most 4096 characters"],
    });
  });

  it('derives the JSON Schema of any definition, without the dialect marker providers do not need', () => {
    const tool = defineTool({
      name: 't',
      wireName: 't',
      description: 'd',
      input: z.strictObject({ a: textArgument(5, 'A.').optional() }),
      example: '{}',
      annotations: readsSkills('T'),
      execute: async () => ({ output: '', summary: { skill: null, truncated: false } }),
    });
    expect(inputJsonSchema(tool)).toEqual({
      type: 'object',
      properties: { a: { type: 'string', maxLength: 5, description: 'A.' } },
      additionalProperties: false,
    });
  });
});

describe(toolStyleFor.name, () => {
  it.each(TOOL_STYLES)(
    '%s: wire names model APIs accept, canonical names known to the metrics, skills.readResource always there',
    (style) => {
      const sut = toolStyleFor(style, snapshotOf('pdf', 'docx'));
      for (const tool of sut.tools) {
        expect(tool.wireName).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
        expect(KNOWN_TOOL_NAMES.has(tool.name)).toBe(true);
        expect(sut.byWireName(tool.wireName)).toBe(tool);
        expect(sut.byName(tool.name)).toBe(tool);
      }
      expect(sut.byName('skills.readResource')).toBe(readResourceTool);
      expect(sut.definitions.map((d) => d.inputSchema)).toEqual(sut.tools.map(inputJsonSchema));
      const { tool, args } = sut.activation('pdf');
      expect(sut.tools).toContain(tool);
      expect(parseToolArguments(tool, args).ok).toBe(true);
    },
  );

  it('builds each style once per snapshot, and anew for the next snapshot', () => {
    const first = snapshotOf('pdf');
    expect(toolStyleFor('activate_skill', first)).toBe(toolStyleFor('activate_skill', first));
    const next = toolStyleFor('activate_skill', snapshotOf('pdf', 'xlsx'));
    expect(next.definitions[0].inputSchema).toMatchObject({ properties: { name: { enum: ['pdf', 'xlsx'] } } });
  });

  it('activate_skill without skills takes any name (an empty enum is no schema) and says none are available', () => {
    const sut = toolStyleFor('activate_skill', snapshotOf());
    expect(sut.definitions[0].inputSchema).toMatchObject({
      properties: { name: { type: 'string', description: 'No skills are available.' } },
    });
  });

  it("load_skill lists every skill on one line each in its description; the prompt's catalogue is left out", () => {
    const sut = toolStyleFor('load_skill', snapshotOf('pdf', 'docx'));
    expect(sut.catalogueInPrompt).toBe(false);
    expect(sut.definitions[0].description).toMatch(
      /\n\nAvailable skills:\n- docx: Does docx things\. Two lines\.\n- pdf: Does pdf things\. Two lines\.$/,
    );
  });
});
