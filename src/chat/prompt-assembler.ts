/**
 * The system prompt, assembled by a pure function: the same inputs give byte-identical output,
 * so prompts are testable and cache-friendly. Level 1 (the catalogue) goes in every prompt with
 * skills; level 2 only as the fallback for an explicit invocation when tools are unavailable.
 */
export interface PromptInputs {
  basePrompt: string;
  skills?: {
    /** The rendered catalogue; empty when no skill is loaded (the skills block is then omitted). */
    catalogue: string;
    /** Names of the skills this chat has activated. */
    activated: readonly string[];
    toolsAvailable: boolean;
    /** The skill the user invoked explicitly this turn, if any. */
    invoked?: string;
    /** SKILL.md of the invoked skill, for this request only, when tools are unavailable. */
    fallback?: { name: string; body: string };
  };
}

export function assembleSystemPrompt(inputs: PromptInputs): string {
  const parts = [inputs.basePrompt.trim()];
  const skills = inputs.skills;
  if (skills !== undefined && skills.catalogue !== '') {
    parts.push(rulesBlock(skills.toolsAvailable), `Available skills:\n${skills.catalogue}`);
    if (skills.activated.length > 0) {
      // Earlier turns reach the model as their text only, not their tool results: say so, or a model
      // would take "activated" to mean the instructions are in front of it.
      const reread = skills.toolsAvailable ? ' Their instructions from earlier turns are not repeated here: activate one again to read them.' : '';
      parts.push(`Skills already activated in this chat: ${skills.activated.join(', ')}.${reread}`);
    }
    if (skills.invoked !== undefined) parts.push(`The user invoked the skill '${skills.invoked}' for this message: use it.`);
    if (skills.fallback !== undefined) {
      parts.push(`Instructions of the skill '${skills.fallback.name}' (its SKILL.md), for this message:\n<skill name="${skills.fallback.name}">\n${skills.fallback.body}\n</skill>`);
    }
  }
  return parts.filter((part) => part !== '').join('\n\n');
}

function rulesBlock(toolsAvailable: boolean): string {
  const lines = [
    '## Skills',
    'Skills are folders of instructions for specific tasks. The catalogue below lists each by name and description.',
  ];
  if (toolsAvailable) {
    lines.push(
      '- Before using a skill, activate it with the skills_activate tool, then follow the instructions it returns.',
      "- Read a skill's other files with skills_readResource only when its instructions call for them; paths are relative to the skill folder.",
    );
  } else {
    lines.push('- Tools are not available in this conversation: use a skill only when its instructions are included below.');
  }
  lines.push('- A message starting with /name means the user chose that skill.');
  return lines.join('\n');
}
