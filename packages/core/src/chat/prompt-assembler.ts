/**
 * The system prompt, assembled by a pure function: the same inputs give byte-identical output,
 * so prompts are testable and cache-friendly. Level 1 (the catalogue) goes in every prompt with
 * skills (unless the tool style lists the skills in a tool instead); level 2 only as the fallback
 * for an explicit invocation when tools are unavailable.
 */
export interface PromptInputs {
  basePrompt: string;
  skills?: {
    /** The rendered catalogue; empty when no skill is loaded (the skills block is then omitted). */
    catalogue: string;
    /**
     * The catalogue lists only some skills (ranked for this turn): it then comes after every rule, so the prompt's
     * start stays the same from turn to turn.
     */
    partial?: boolean;
    /** The model is offered skills_search this turn (a partial catalogue's heading says so). */
    searchable?: boolean;
    /** False when the tool style lists the skills elsewhere (load_skill's description). Default true. */
    catalogueInPrompt?: boolean;
    /** `aloop`: the aloop design's section (markdown catalogue with locations). Default `standard`. */
    layout?: 'standard' | 'aloop';
    /** The style's how-to lines while tools are offered (default: the `skillhost` style's). */
    toolRules?: readonly string[];
    /** Names of the skills this chat has activated. */
    activated: readonly string[];
    /**
     * SKILL.md of each activated skill, kept in the prompt for the rest of the conversation: for clients that resend
     * their history without the tool results that carried the instructions (the OpenAI-compatible gateway).
     */
    kept?: readonly { name: string; body: string }[];
    toolsAvailable: boolean;
    /** The skills the user invoked explicitly this turn, in order. */
    invoked?: readonly string[];
    /** SKILL.md of each invoked skill, for this request only, when tools are unavailable. */
    fallback?: readonly { name: string; body: string }[];
    /** What each invoked code skill answered when it ran for this message. */
    ran?: readonly { name: string; output: string }[];
    /** The commands users can run; listed so the model knows what `/name` in the chat means. */
    commands?: readonly PromptCommand[];
    /** The command this message ran. */
    command?: string;
  };
}

export interface PromptCommand {
  name: string;
  description: string;
  argumentHint: string | null;
}

const SKILLHOST_RULES = [
  '- Before using a skill, activate it with the skills_activate tool, then follow the instructions it returns.',
  "- Read a skill's other files with skills_readResource only when its instructions call for them; paths are " +
    'relative to the skill folder.',
];
const NO_TOOLS_RULE =
  '- Tools are not available in this conversation: use a skill only when its instructions are included below.';

export function assembleSystemPrompt(inputs: PromptInputs): string {
  const parts = [inputs.basePrompt.trim()];
  const skills = inputs.skills;
  // A partial catalogue changes from turn to turn: it goes last, so everything before it (rules,
  // commands, what the chat activated) stays one cacheable prefix.
  let ranked = '';
  if (skills !== undefined) {
    const loaded = skills.catalogue !== '';
    if (loaded) {
      const section = skillsSection(skills);
      parts.push(section.text);
      ranked = section.ranked;
    }
    // A command needs no loaded skill to run, so the list stands even without a catalogue.
    if (skills.commands !== undefined && skills.commands.length > 0) parts.push(commandsBlock(skills.commands));
    const kept = skills.kept ?? [];
    if (loaded && kept.length > 0) parts.push(keptBlock(kept));
    else if (loaded && skills.activated.length > 0) {
      // Earlier turns reach the model as their text only, not their tool results: say so, or a model
      // would take "activated" to mean the instructions are in front of it.
      const reread = skills.toolsAvailable
        ? ' Their instructions from earlier turns are not repeated here: activate one again to read them.'
        : '';
      parts.push(`Skills already activated in this chat: ${skills.activated.join(', ')}.${reread}`);
    }
    if (skills.command !== undefined)
      parts.push(
        `The user ran the command /${skills.command}: their message below is its prompt, and the skills it ` +
          `requires have been activated for it.`,
      );
    const invoked = skills.invoked ?? [];
    if (invoked.length === 1) parts.push(`The user invoked the skill '${invoked[0]}' for this message: use it.`);
    else if (invoked.length > 1)
      parts.push(
        `The user invoked the skills ${invoked
          .map((name) => `'${name}'`)
          .join(', ')} for this message, in this order: use them.`,
      );
    const fallback = skills.fallback ?? [];
    if (fallback.length > 0) parts.push(fallbackBlock(fallback));
    for (const run of skills.ran ?? [])
      parts.push(
        `The code skill '${run.name}' the user invoked ran for this message and answered:\n<skill_result ` +
          `name="${run.name}">\n${run.output}\n</skill_result>`,
      );
  }
  parts.push(ranked);
  return parts.filter((part) => part !== '').join('\n\n');
}

/** The skills section, and a partial catalogue to put last (empty when the catalogue is whole or not in the prompt). */
function skillsSection(skills: NonNullable<PromptInputs['skills']>): { text: string; ranked: string } {
  const rules = skills.toolsAvailable ? (skills.toolRules ?? SKILLHOST_RULES) : [NO_TOOLS_RULE];
  // Without tools nothing else can show the model the skills: the catalogue goes in the prompt.
  const listed = skills.catalogueInPrompt !== false || !skills.toolsAvailable;
  const partial = listed && skills.partial === true;
  if (listed && skills.layout === 'aloop') {
    return partial
      ? { text: aloopSection(undefined, rules), ranked: `### Available skills\n${skills.catalogue}` }
      : { text: aloopSection(skills.catalogue, rules), ranked: '' };
  }
  if (partial)
    return {
      text: standardSection(undefined, rules, true),
      ranked: `${skills.searchable === true ? PARTIAL_INTRO_SEARCHABLE : PARTIAL_INTRO}\n${skills.catalogue}`,
    };
  return { text: standardSection(listed ? skills.catalogue : undefined, rules, false), ranked: '' };
}

/** What heads a partial catalogue at the end of the prompt, with and without skills_search. */
const PARTIAL_INTRO_SEARCHABLE =
  'Available skills (the most relevant to this conversation; skills_search finds the others):';
const PARTIAL_INTRO = 'Available skills (the most relevant to this conversation):';

function standardSection(catalogue: string | undefined, rules: readonly string[], partial: boolean): string {
  const intro = partial
    ? 'Skills are folders of instructions for specific tasks. The catalogue at the end of this prompt lists, by ' +
      'name and description, the skills most relevant to this conversation.'
    : catalogue === undefined
      ? 'Skills are folders of instructions for specific tasks.'
      : 'Skills are folders of instructions for specific tasks. The catalogue below lists each by name and ' +
        'description.';
  const lines = ['## Skills', intro, ...rules, '- A message starting with /name means the user chose that skill.'];
  return catalogue === undefined ? lines.join('\n') : `${lines.join('\n')}\n\nAvailable skills:\n${catalogue}`;
}

/**
 * The aloop design's section: the skills with their SKILL.md paths, then how to use them. A partial
 * catalogue (`undefined` here) goes at the end of the prompt instead, after the rules.
 */
function aloopSection(catalogue: string | undefined, rules: readonly string[]): string {
  const howTo = [
    '### How to use skills',
    "- If the user names a skill (with `$name`, `/name` or in plain words) or the task matches a skill's " +
      'description, use that skill.',
    ...rules,
    "- Announce which skill(s) you're using and why.",
  ];
  const intro = ['## Skills', 'A skill is a set of local instructions stored in a `SKILL.md` file.', ''];
  return (
    catalogue === undefined ? [...intro, ...howTo] : [...intro, '### Available skills', catalogue, '', ...howTo]
  ).join('\n');
}

function commandsBlock(commands: readonly PromptCommand[]): string {
  const lines = commands.map(
    (c) => `- /${c.name}${c.argumentHint ? ` ${c.argumentHint}` : ''}: ${c.description.replace(/\s*[\r\n]+\s*/g, ' ')}`,
  );
  return `Commands users can run (a message starting with /name runs that command's prompt):\n${lines.join('\n')}`;
}

/** The activated skills' instructions, kept for the whole conversation. */
function keptBlock(kept: readonly { name: string; body: string }[]): string {
  const blocks = kept.map((skill) => `<skill name="${skill.name}">\n${skill.body}\n</skill>`);
  return (
    `Skills already activated in this conversation: ${kept.map((s) => s.name).join(', ')}. Their instructions ` +
    `(each SKILL.md) stay in effect:\n${blocks.join('\n')}`
  );
}

function fallbackBlock(fallback: readonly { name: string; body: string }[]): string {
  const blocks = fallback.map((skill) => `<skill name="${skill.name}">\n${skill.body}\n</skill>`);
  if (fallback.length === 1)
    return `Instructions of the skill '${fallback[0].name}' (its SKILL.md), for this message:\n${blocks[0]}`;
  return (
    `Instructions of the skills ${fallback.map((s) => `'${s.name}'`).join(', ')} (their SKILL.md), for this ` +
    `message:\n${blocks.join('\n')}`
  );
}
