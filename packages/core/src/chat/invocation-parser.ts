/**
 * Explicit invocation, at the start of a message:
 * - `/name args` where `name` is a command: the command runs with `args` (commands are always `/`,
 *   and win over a skill of the same name);
 * - `<prefix>a <prefix>b … text` where each name is a loaded skill: those skills, in order, up to
 *   MAX_INVOKED_SKILLS names (a repeat counts, and is invoked once); parsing stops at the first
 *   word that is not one (it stays text).
 * Whatever is invoked is stripped before the model sees the text; an unknown name leaves the
 * message exactly as typed (not an error: `/etc/hosts` is ordinary text).
 */
export interface Invocation {
  /** The invoked skills, in order, without repeats; empty for a plain message. */
  skills: string[];
  command: { name: string; arguments: string } | null;
  /** What the model sees as the user's words (a command's template is expanded later). */
  text: string;
}

export interface InvocationRules {
  prefixes: readonly string[];
  isSkill(name: string): boolean;
  isCommand?(name: string): boolean;
}

export const MAX_INVOKED_SKILLS = 5;
export const COMMAND_PREFIX = '/';

const WORD = /^(\S+)(?:\s+([\s\S]*))?$/;

export function parseInvocation(content: string, rules: InvocationRules): Invocation {
  let rest = content.trimStart();
  if (rules.isCommand !== undefined && rest.startsWith(COMMAND_PREFIX)) {
    const match = WORD.exec(rest.slice(COMMAND_PREFIX.length));
    if (match !== null && rules.isCommand(match[1])) {
      const args = (match[2] ?? '').trim();
      return { skills: [], command: { name: match[1], arguments: args }, text: args };
    }
  }
  const skills: string[] = [];
  // Names, not distinct skills, count towards the limit: `/a /a /a …` stops after five like any list.
  for (let named = 0; named < MAX_INVOKED_SKILLS; named++) {
    const next = invokedSkill(rest, rules);
    if (next === undefined) break;
    if (!skills.includes(next.name)) skills.push(next.name);
    rest = next.rest;
  }
  if (skills.length === 0) return { skills, command: null, text: content };
  const text = rest.trim();
  return { skills, command: null, text: text === '' ? useRequest(skills) : text };
}

function invokedSkill(text: string, rules: InvocationRules): { name: string; rest: string } | undefined {
  for (const prefix of rules.prefixes) {
    if (!text.startsWith(prefix)) continue;
    const match = WORD.exec(text.slice(prefix.length));
    if (match !== null && rules.isSkill(match[1])) return { name: match[1], rest: match[2] ?? '' };
  }
  return undefined;
}

/** What the model is asked when the message is only the invocation. */
function useRequest(skills: readonly string[]): string {
  if (skills.length === 1) return `Use the ${skills[0]} skill.`;
  return `Use the ${skills.slice(0, -1).join(', ')} and ${skills.at(-1)} skills.`;
}
