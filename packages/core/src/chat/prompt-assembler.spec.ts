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
        'Skills are folders of instructions for specific tasks. The catalogue below lists each by name and ' +
          'description.',
        '- Before using a skill, activate it with the skills_activate tool, then follow the instructions it returns.',
        "- Read a skill's other files with skills_readResource only when its instructions call for them; paths " +
          'are relative to the skill folder.',
        '- A message starting with /name means the user chose that skill.',
        '',
        'Available skills:',
        catalogue,
      ].join('\n'),
    );
  });

  it(
    'puts a partial catalogue last, so the rules, the commands and the activated skills stay one prefix from turn ' +
      'to turn',
    () => {
      const turn = (ranked: string) =>
        assembleSystemPrompt(
          inputs({
            catalogue: ranked,
            partial: true,
            searchable: true,
            activated: ['pdf'],
            commands: [{ name: 'ship', description: 'Ships it.', argumentHint: null }],
          }),
        );
      const first = turn(catalogue);
      const second = turn('{"available_skills":[{"name":"xlsx","description":"Sheets."}]}');
      expect(
        first.endsWith(
          `Available skills (the most relevant to this conversation; skills_search finds the others):\n${catalogue}`,
        ),
      ).toBe(true);
      const prefix = first.slice(0, first.indexOf('Available skills ('));
      expect(second.startsWith(prefix)).toBe(true);
      expect(prefix).toContain('Skills already activated in this chat: pdf.');
      expect(prefix).toContain('- /ship: Ships it.');
      expect(prefix).toContain('The catalogue at the end of this prompt lists');
    },
  );

  it("does not name skills_search in a partial catalogue's heading when the model is not offered it", () => {
    const prompt = assembleSystemPrompt(inputs({ catalogue, partial: true, toolsAvailable: false }));
    expect(prompt.endsWith(`Available skills (the most relevant to this conversation):\n${catalogue}`)).toBe(true);
    expect(prompt).not.toContain('skills_search');
  });

  it('puts a partial aloop catalogue last too, after its "How to use skills" rules', () => {
    const prompt = assembleSystemPrompt(
      inputs({ catalogue: '- pdf: PDFs. (file: /s/pdf/SKILL.md)', partial: true, layout: 'aloop' }),
    );
    expect(prompt.indexOf('### How to use skills')).toBeLessThan(prompt.indexOf('### Available skills'));
    expect(prompt.endsWith('### Available skills\n- pdf: PDFs. (file: /s/pdf/SKILL.md)')).toBe(true);
  });

  it("lists the chat's activated skills by name only, and the invoked skill", () => {
    const prompt = assembleSystemPrompt(inputs({ activated: ['pdf', 'git-commit'], invoked: ['pdf'] }));
    expect(prompt).toContain('Skills already activated in this chat: pdf, git-commit.');
    expect(prompt).toContain("The user invoked the skill 'pdf' for this message: use it.");
  });

  it('says activated skills must be activated again to read them, only when the tools are there to do it', () => {
    const reread = 'Their instructions from earlier turns are not repeated here: activate one again to read them.';
    expect(assembleSystemPrompt(inputs({ activated: ['pdf'] }))).toContain(
      `Skills already activated in this chat: pdf. ${reread}`,
    );
    const withoutTools = assembleSystemPrompt(inputs({ activated: ['pdf'], toolsAvailable: false }));
    expect(withoutTools).toContain('Skills already activated in this chat: pdf.');
    expect(withoutTools).not.toContain(reread);
  });

  it('includes the invoked SKILL.md only as the fallback, and says tools are unavailable', () => {
    const prompt = assembleSystemPrompt(
      inputs({ toolsAvailable: false, invoked: ['pdf'], fallback: [{ name: 'pdf', body: '# PDF\nSteps.' }] }),
    );
    expect(prompt).toContain('Tools are not available in this conversation');
    expect(prompt).not.toContain('skills_activate');
    expect(
      prompt.endsWith(
        'Instructions of the skill \'pdf\' (its SKILL.md), for this message:\n<skill name="pdf">\n# ' +
          'PDF\nSteps.\n</skill>',
      ),
    ).toBe(true);
  });

  it("names several invoked skills in order and includes each one's SKILL.md in the fallback", () => {
    const prompt = assembleSystemPrompt(
      inputs({
        toolsAvailable: false,
        invoked: ['pdf', 'docx'],
        fallback: [
          { name: 'pdf', body: 'P.' },
          { name: 'docx', body: 'D.' },
        ],
      }),
    );
    expect(prompt).toContain("The user invoked the skills 'pdf', 'docx' for this message, in this order: use them.");
    expect(
      prompt.endsWith(
        "Instructions of the skills 'pdf', 'docx' (their SKILL.md), for this message:\n<skill " +
          'name="pdf">\nP.\n</skill>\n<skill name="docx">\nD.\n</skill>',
      ),
    ).toBe(true);
  });

  it("uses the style's rules, and leaves the catalogue out when the style lists skills in its tool", () => {
    const rules = ['- Call load_skill.'];
    const prompt = assembleSystemPrompt(inputs({ toolRules: rules, catalogueInPrompt: false }));
    expect(prompt).toBe(
      [
        'You are helpful.',
        '',
        '## Skills',
        'Skills are folders of instructions for specific tasks.',
        '- Call load_skill.',
        '- A message starting with /name means the user chose that skill.',
      ].join('\n'),
    );
    // Without tools nothing else shows the skills: the catalogue is back.
    expect(
      assembleSystemPrompt(inputs({ toolRules: rules, catalogueInPrompt: false, toolsAvailable: false })),
    ).toContain(`Available skills:\n${catalogue}`);
  });

  it("renders the aloop design's section for the markdown catalogue with locations", () => {
    const lines = '- pdf: PDFs. (file: /skills/pdf/SKILL.md)';
    expect(assembleSystemPrompt(inputs({ catalogue: lines, layout: 'aloop' }))).toBe(
      [
        'You are helpful.',
        '',
        '## Skills',
        'A skill is a set of local instructions stored in a `SKILL.md` file.',
        '',
        '### Available skills',
        lines,
        '',
        '### How to use skills',
        "- If the user names a skill (with `$name`, `/name` or in plain words) or the task matches a skill's " +
          'description, use that skill.',
        '- Before using a skill, activate it with the skills_activate tool, then follow the instructions it returns.',
        "- Read a skill's other files with skills_readResource only when its instructions call for them; paths " +
          'are relative to the skill folder.',
        "- Announce which skill(s) you're using and why.",
      ].join('\n'),
    );
  });

  it('lists the commands users can run, and says which one this message ran', () => {
    const prompt = assembleSystemPrompt(
      inputs({
        commands: [
          { name: 'review', description: 'Review a PR.\nCarefully.', argumentHint: '<pr>' },
          { name: 'standup', description: 'Daily notes.', argumentHint: null },
        ],
        command: 'review',
      }),
    );
    expect(prompt).toContain(
      "Commands users can run (a message starting with /name runs that command's prompt):\n- /review <pr>: " +
        'Review a PR. Carefully.\n- /standup: Daily notes.',
    );
    expect(prompt).toContain(
      'The user ran the command /review: their message below is its prompt, and the skills it requires have ' +
        'been activated for it.',
    );
  });

  it('is byte-identical for the same inputs', () => {
    const a = inputs({
      activated: ['pdf'],
      invoked: ['pdf'],
      commands: [{ name: 'review', description: 'Review.', argumentHint: '<pr>' }],
    });
    expect(assembleSystemPrompt(a)).toBe(assembleSystemPrompt(structuredClone(a)));
  });
});
