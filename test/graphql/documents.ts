/** GraphQL fragments that select every field of a type, for comparing answers with their REST twins. */
const FRAGMENTS: Record<string, string> = {
  ActivationFields:
    'fragment ActivationFields on ActivatedSkill { name how firstActivatedAt lastActivatedAt count version }',
  ToolCardFields: 'fragment ToolCardFields on ToolCard { id tool args status summary output durationMs }',
  MessageFields:
    'fragment MessageFields on Message { id seq role content toolCards { ...ToolCardFields } invokedSkill ' +
    'invokedSkills command { name arguments prompt } model createdAt }',
  TurnFields:
    'fragment TurnFields on Turn { userMessage { ...MessageFields } assistantMessage { ...MessageFields } ' +
    'activatedSkills { ...ActivationFields } invokedSkill invokedSkills command { name arguments prompt } }',
  ToolRunFields:
    'fragment ToolRunFields on ToolRun { toolCard { ...ToolCardFields } activatedSkills { ...ActivationFields } }',
};

/** A document with the fragments it spreads, and theirs (GraphQL refuses unused fragments). */
export function gql(document: string): string {
  const needed = new Set<string>();
  const visit = (text: string) => {
    for (const [, name] of text.matchAll(/\.\.\.(\w+)/g)) {
      if (!needed.has(name) && FRAGMENTS[name] !== undefined) {
        needed.add(name);
        visit(FRAGMENTS[name]);
      }
    }
  };
  visit(document);
  return [document, ...[...needed].map((name) => FRAGMENTS[name])].join('\n');
}
