/**
 * The two skill tools. Canonical names (`skills.activate`) are what cards, logs and the API show;
 * model APIs allow only `[a-zA-Z0-9_-]{1,64}` in tool names, so the wire names use `_`.
 */
export type SkillToolName = 'skills.activate' | 'skills.readResource';

export interface SkillToolDefinition {
  name: SkillToolName;
  wireName: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export const SKILL_TOOLS: readonly SkillToolDefinition[] = [
  {
    name: 'skills.activate',
    wireName: 'skills_activate',
    description:
      "Load a skill's full instructions (its SKILL.md) by name. Call this before using any skill from the catalogue, then follow the instructions it returns.",
    inputSchema: {
      type: 'object',
      properties: { name: { type: 'string', description: 'The skill name, exactly as listed in the catalogue.' } },
      required: ['name'],
      additionalProperties: false,
    },
  },
  {
    name: 'skills.readResource',
    wireName: 'skills_readResource',
    description:
      "Read one of a skill's other files (references/, assets/, scripts/) by a path relative to the skill folder. Use only when the skill's instructions call for that file.",
    inputSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', description: 'The skill name.' },
        path: { type: 'string', description: 'Path relative to the skill folder, e.g. references/REFERENCE.md.' },
      },
      required: ['name', 'path'],
      additionalProperties: false,
    },
  },
];

const BY_WIRE = new Map(SKILL_TOOLS.map((tool) => [tool.wireName, tool]));
const BY_NAME = new Map(SKILL_TOOLS.map((tool) => [tool.name, tool]));

export function toolByWireName(wireName: string): SkillToolDefinition | undefined {
  return BY_WIRE.get(wireName);
}

export function toolByName(name: string): SkillToolDefinition | undefined {
  return BY_NAME.get(name as SkillToolName);
}

/** The arguments a tool needs, checked here rather than by the SDK so the model gets a readable error. */
export function checkToolArguments(tool: SkillToolName, args: unknown): { name: string; path?: string } | string {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return `Arguments must be a JSON object like ${example(tool)}.`;
  const record = args as Record<string, unknown>;
  const required = tool === 'skills.activate' ? ['name'] : ['name', 'path'];
  const problems = required.filter((key) => typeof record[key] !== 'string' || (record[key] as string).trim() === '').map((key) => `'${key}' must be a non-empty string`);
  const unknown = Object.keys(record).filter((key) => !required.includes(key));
  if (unknown.length > 0) problems.push(`unknown argument(s): ${unknown.join(', ')}`);
  if (problems.length > 0) return `Invalid arguments for ${tool}: ${problems.join('; ')}. Expected ${example(tool)}.`;
  return tool === 'skills.activate' ? { name: record.name as string } : { name: record.name as string, path: record.path as string };
}

function example(tool: SkillToolName): string {
  return tool === 'skills.activate' ? '{"name": "<skill>"}' : '{"name": "<skill>", "path": "references/REFERENCE.md"}';
}
