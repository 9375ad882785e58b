import { describe, expect, it } from '@jest/globals';
import { checkToolArguments, SKILL_TOOLS, toolByName, toolByWireName } from './skill-tools.js';

describe('skill tools', () => {
  it('have wire names that model APIs accept and canonical names for people', () => {
    for (const tool of SKILL_TOOLS) {
      expect(tool.wireName).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
      expect(toolByWireName(tool.wireName)).toBe(tool);
      expect(toolByName(tool.name)).toBe(tool);
    }
    expect(SKILL_TOOLS.map((t) => [t.name, t.wireName])).toEqual([
      ['skills.activate', 'skills_activate'],
      ['skills.readResource', 'skills_readResource'],
    ]);
  });
});

describe(checkToolArguments.name, () => {
  it('accepts the documented arguments', () => {
    expect(checkToolArguments('skills.activate', { name: 'pdf' })).toEqual({ name: 'pdf' });
    expect(checkToolArguments('skills.readResource', { name: 'pdf', path: 'a.md' })).toEqual({ name: 'pdf', path: 'a.md' });
  });

  it('explains what is wrong and what was expected', () => {
    expect(checkToolArguments('skills.activate', 'pdf')).toBe('Arguments must be a JSON object like {"name": "<skill>"}.');
    expect(checkToolArguments('skills.activate', { skill: 'pdf' })).toBe(
      'Invalid arguments for skills.activate: \'name\' must be a non-empty string; unknown argument(s): skill. Expected {"name": "<skill>"}.',
    );
    expect(checkToolArguments('skills.readResource', { name: 'pdf', path: 3 })).toBe(
      'Invalid arguments for skills.readResource: \'path\' must be a non-empty string. Expected {"name": "<skill>", "path": "references/REFERENCE.md"}.',
    );
  });
});
