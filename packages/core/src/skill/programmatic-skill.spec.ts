import { describe, expect, it } from '@jest/globals';
import { AppError, ErrorCode } from '../errors/app-error.js';
import { type ProgrammaticSkill, programmaticSkillRecord } from './programmatic-skill.js';
import type { SkillScope } from './skill.types.js';

function problemsOf(skill: unknown, scope: SkillScope = 'workspace'): { message: string; problems: unknown } {
  try {
    programmaticSkillRecord(skill as ProgrammaticSkill, scope);
  } catch (error) {
    if (AppError.isInstance(error) && error.code === ErrorCode.VALIDATION_FAILED)
      return { message: error.message, problems: error.details?.problems };
    throw error;
  }
  throw new Error('expected VALIDATION_FAILED');
}

describe(programmaticSkillRecord.name, () => {
  it('holds an instruction skill in memory, with paths that say where it came from', () => {
    const sut = programmaticSkillRecord(
      {
        name: 'release-notes',
        description: 'Writes release notes.',
        instructions: '# Steps',
        resources: { 'references/./style.md': 'Be brief.' },
        toolsRequired: ['use_skill'],
      },
      'user',
    );
    expect(sut).toMatchObject({
      name: 'release-notes',
      description: 'Writes release notes.',
      path: 'programmatic:user/release-notes',
      skillFile: 'programmatic:user/release-notes/SKILL.md',
      source: 'programmatic:user',
      frontmatter: { name: 'release-notes', description: 'Writes release notes.' },
      warnings: [],
      origin: 'programmatic',
      scope: 'user',
      toolsRequired: ['use_skill'],
      programmatic: { instructions: '# Steps', execute: undefined },
    });
    expect([...sut.programmatic!.resources]).toEqual([['references/style.md', 'Be brief.']]);
  });

  it("checks name and description by the specification's rules, with its messages", () => {
    expect(problemsOf({ name: 'Bad--Name', description: '', instructions: 'x' }).problems).toEqual([
      "Skill name 'Bad--Name' must be lowercase",
      'Skill name cannot contain consecutive hyphens',
      "Field 'description' must be a non-empty string",
    ]);
    expect(problemsOf({ name: 'x'.repeat(65), description: 'd'.repeat(1025), instructions: 'x' }).problems).toEqual([
      `Skill name '${'x'.repeat(65)}' exceeds 64 character limit (65 chars)`,
      'Description exceeds 1024 character limit (1025 chars)',
    ]);
  });

  it('names every other problem, and the skill, in one message', () => {
    const sut = problemsOf(
      {
        name: 'tool',
        description: 'A tool.',
        execute: 'run()',
        canHandle: 1,
        resources: { '../secret': 'x', 'SKILL.md': 'y', 'a.md': 2 },
        toolsRequired: 'bash',
      },
      'global' as SkillScope,
    );
    expect(sut.problems).toEqual([
      'scope must be one of bundled, user, workspace (got global)',
      "'execute' must be a function",
      "'canHandle' must be a function",
      "'toolsRequired' must be a list of tool names",
      "resource '../secret': Resource path '../secret' leaves the skill folder; '..' is not allowed.",
      "resource 'SKILL.md' is the skill itself; give its body as 'instructions'",
      "resource 'a.md' must be text (a string)",
    ]);
    expect(sut.message).toMatch(/^Programmatic skill 'tool' cannot be registered: scope must be one of/);
  });

  it('needs instructions, code, or both', () => {
    expect(problemsOf({ name: 'empty', description: 'Nothing.' }).problems).toEqual([
      "give 'instructions' (an instruction skill), 'execute' (a code skill), or both",
    ]);
    expect(problemsOf(null).message).toBe(
      "Programmatic skill (unnamed) cannot be registered: Field 'name' must be a non-empty string; Field " +
        "'description' must be a non-empty string; the skill must be an object { name, description, " +
        'instructions?, execute?, … }.',
    );
  });

  it('refuses two resource paths that name the same file', () => {
    expect(
      problemsOf({ name: 'dup', description: 'd', instructions: 'x', resources: { 'a/b.md': '1', 'a//b.md': '2' } })
        .problems,
    ).toEqual(["resource 'a//b.md' names 'a/b.md' twice"]);
  });
});
