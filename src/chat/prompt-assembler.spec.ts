import { describe, expect, it } from '@jest/globals';
import { assembleSystemPrompt, type PromptInputs } from './prompt-assembler.js';

const catalogue = '{"available_skills":[{"name":"pdf","description":"PDFs."}]}';
const inputs = (skills?: Partial<NonNullable<PromptInputs['skills']>>): PromptInputs => ({
  basePrompt: 'You are helpful.',
  skills: skills === undefined ? undefined : { catalogue, activated: [], toolsAvailable: true, ...skills },
});

describe(assembleSystemPrompt.name, () => {
  it('is the base prompt alone when skills are off or none is loaded', () => {
    expect(assembleSystemPrompt(inputs())).toBe('You are helpful.');
    expect(assembleSystemPrompt(inputs({ catalogue: '' }))).toBe('You are helpful.');
  });

  it('adds the rules and the catalogue, naming the wire tools', () => {
    expect(assembleSystemPrompt(inputs({}))).toBe(
      [
        'You are helpful.',
        '',
        '## Skills',
        'Skills are folders of instructions for specific tasks. The catalogue below lists each by name and description.',
        '- Before using a skill, activate it with the skills_activate tool, then follow the instructions it returns.',
        "- Read a skill's other files with skills_readResource only when its instructions call for them; paths are relative to the skill folder.",
        '- A message starting with /name means the user chose that skill.',
        '',
        'Available skills:',
        catalogue,
      ].join('\n'),
    );
  });

  it("lists the chat's activated skills by name only, and the invoked skill", () => {
    const prompt = assembleSystemPrompt(inputs({ activated: ['pdf', 'git-commit'], invoked: 'pdf' }));
    expect(prompt).toContain('Skills already activated in this chat: pdf, git-commit.');
    expect(prompt).toContain("The user invoked the skill 'pdf' for this message: use it.");
  });

  it('says activated skills must be activated again to read them, only when the tools are there to do it', () => {
    const reread = 'Their instructions from earlier turns are not repeated here: activate one again to read them.';
    expect(assembleSystemPrompt(inputs({ activated: ['pdf'] }))).toContain(`Skills already activated in this chat: pdf. ${reread}`);
    const withoutTools = assembleSystemPrompt(inputs({ activated: ['pdf'], toolsAvailable: false }));
    expect(withoutTools).toContain('Skills already activated in this chat: pdf.');
    expect(withoutTools).not.toContain(reread);
  });

  it('includes the invoked SKILL.md only as the fallback, and says tools are unavailable', () => {
    const prompt = assembleSystemPrompt(inputs({ toolsAvailable: false, invoked: 'pdf', fallback: { name: 'pdf', body: '# PDF\nSteps.' } }));
    expect(prompt).toContain('Tools are not available in this conversation');
    expect(prompt).not.toContain('skills_activate');
    expect(prompt.endsWith("Instructions of the skill 'pdf' (its SKILL.md), for this message:\n<skill name=\"pdf\">\n# PDF\nSteps.\n</skill>")).toBe(true);
  });

  it('is byte-identical for the same inputs', () => {
    const a = inputs({ activated: ['pdf'], invoked: 'pdf' });
    expect(assembleSystemPrompt(a)).toBe(assembleSystemPrompt(structuredClone(a)));
  });
});
