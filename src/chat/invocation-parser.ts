/**
 * Explicit invocation: a message that starts with `<prefix><name>` followed by whitespace or its
 * end, where `<name>` is a loaded skill. The prefix and name are stripped before the model sees the
 * text; an unknown name leaves the message exactly as typed (it is not an error: `/etc/hosts` is
 * ordinary text).
 */
export interface Invocation {
  /** The invoked skill, or null for a plain message. */
  skill: string | null;
  /** What the model sees as the user's words. */
  text: string;
}

export function parseInvocation(content: string, prefixes: readonly string[], isSkill: (name: string) => boolean): Invocation {
  const start = content.trimStart();
  for (const prefix of prefixes) {
    if (!start.startsWith(prefix)) continue;
    const match = /^(\S+)(?:\s+([\s\S]*))?$/.exec(start.slice(prefix.length));
    if (match === null || !isSkill(match[1])) continue;
    const rest = (match[2] ?? '').trim();
    return { skill: match[1], text: rest === '' ? `Use the ${match[1]} skill.` : rest };
  }
  return { skill: null, text: content };
}
