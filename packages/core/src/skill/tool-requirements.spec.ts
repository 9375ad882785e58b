import { describe, expect, it } from '@jest/globals';
import type { SkillRecord } from './skill.types.js';
import {
  checkToolsRequired,
  defaultToolNames,
  readToolsRequired,
  toolAvailability,
  toolKey,
} from './tool-requirements.js';

const frontmatter = (extra: Record<string, unknown>) => ({ name: 'x', description: 'd', ...extra });
const skill = (toolsRequired: string[]): SkillRecord => ({
  name: 'x',
  description: 'd',
  path: '/s/x',
  skillFile: '/s/x/SKILL.md',
  source: '/s',
  frontmatter: { name: 'x', description: 'd' },
  warnings: [],
  toolsRequired,
});

describe(readToolsRequired.name, () => {
  it.each([
    ['a top-level list', { tools_required: ['bash', ' web_search '] }, ['bash', 'web_search']],
    ['a space-separated string', { tools_required: 'bash  web_search' }, ['bash', 'web_search']],
    ['a comma-separated string', { tools_required: 'bash, web_search,' }, ['bash', 'web_search']],
    ['metadata as a string', { metadata: { tools_required: 'bash' } }, ['bash']],
    [
      'metadata as the JSON text a list is stored as',
      { metadata: { tools_required: '["bash","shell"]' } },
      ['bash', 'shell'],
    ],
    ['both, merged', { tools_required: 'bash', metadata: { tools_required: 'bash shell' } }, ['bash', 'shell']],
  ])('reads %s', (_, extra, tools) => {
    expect(readToolsRequired(frontmatter(extra))).toEqual({ tools, warnings: [] });
  });

  it('reads nothing when neither is declared, or when the declaration is empty', () => {
    expect(readToolsRequired(frontmatter({}))).toEqual({ warnings: [] });
    expect(readToolsRequired(frontmatter({ tools_required: ' ' }))).toEqual({ warnings: [] });
  });

  it('warns about a declaration that is not a list of names, and ignores it', () => {
    expect(readToolsRequired(frontmatter({ tools_required: { bash: true } }))).toEqual({
      warnings: [
        "Field 'tools_required' must be a list of tool names or a space- or comma-separated string; it was ignored",
      ],
    });
    expect(readToolsRequired(frontmatter({ metadata: { tools_required: '[1, 2]' } })).warnings).toEqual([
      "Field 'metadata.tools_required' must be a list of tool names or a space- or comma-separated string; it " +
        'was ignored',
    ]);
  });
});

describe(checkToolsRequired.name, () => {
  const scriptsOff = toolAvailability(defaultToolNames(false), false);
  const scriptsOn = toolAvailability(defaultToolNames(true), true);

  it('passes a skill that needs only tools the chats have, by canonical or wire name, in any case', () => {
    expect(
      checkToolsRequired(skill(['skills.activate', 'skills_readResource', 'USE_SKILL', 'load_skill']), scriptsOff),
    ).toBeUndefined();
    expect(
      checkToolsRequired(skill(['bash', 'Shell', 'skills.runScript', 'Bash(python3:*)']), scriptsOn),
    ).toBeUndefined();
  });

  it('names each missing tool and what would offer it', () => {
    expect(checkToolsRequired(skill(['bash', 'skills.activate', 'web_search']), scriptsOff)).toEqual({
      name: 'x',
      path: '/s/x',
      source: '/s',
      missingTools: ['bash', 'web_search'],
      reason:
        "It needs tools the chats of this server do not have: 'bash' (offered only while scripts are on: " +
        "app.scripts.enabled = true), 'web_search' (no chat of this server has it); it is left out of the " +
        'catalogue until they are offered.',
    });
  });

  it('uses the tools the application set instead of the default', () => {
    const custom = toolAvailability(['skills.activate', 'web_search'], false);
    expect(checkToolsRequired(skill(['web_search']), custom)).toBeUndefined();
    expect(checkToolsRequired(skill(['use_skill']), custom)?.missingTools).toEqual(['use_skill']);
  });
});

describe(toolKey.name, () => {
  it('compares names without case, spaces or an allowed-tools pattern', () => {
    expect(toolKey(' Bash(git:*) ')).toBe('bash');
    expect(toolKey('skills.readResource')).toBe('skills.readresource');
  });
});
