import { z } from 'zod';
import { RESOURCE_TYPES, type ResourceListing, type ResourceType } from '../registry/skill-resources.js';
import {
  activationResult,
  defineTool,
  readsSkills,
  MAX_PATH_ARGUMENT,
  MAX_SKILL_NAME_ARGUMENT,
  textArgument,
  type ToolContext,
} from './skill-tool.js';

/** The `skillhost` style's tools; `skills.readResource` is offered in every style. */

const LISTED_FILES = 50;

export const activateTool = defineTool({
  name: 'skills.activate',
  wireName: 'skills_activate',
  description:
    "Load a skill's full instructions (its SKILL.md) by name. Call this before using any skill from the " +
    'catalogue, then follow the instructions it returns.',
  input: z.strictObject({
    name: textArgument(MAX_SKILL_NAME_ARGUMENT, 'The skill name, exactly as listed in the catalogue.'),
  }),
  example: '{"name": "<skill>"}',
  annotations: readsSkills('Activate a skill'),
  async execute({ name }, context) {
    // Independent reads: overlap them rather than waiting for one, then the other.
    const [skill, listing] = await Promise.all([
      context.resources.activate(name),
      context.resources.listResources(name),
    ]);
    const files = listing.files.slice(0, LISTED_FILES).map((f) => f.path);
    const more = listing.files.length > LISTED_FILES || listing.truncated ? ', …' : '';
    const fileLine =
      files.length > 0
        ? `\n\nFiles in this skill (read them with skills_readResource when the instructions call for them): ` +
          `${files.join(', ')}${more}`
        : '';
    return activationResult(skill, `# Skill: ${skill.name}\n\n${skill.body}${fileLine}`);
  },
});

export const readResourceTool = defineTool({
  name: 'skills.readResource',
  wireName: 'skills_readResource',
  description:
    "Read one of a skill's other files (references/, assets/, scripts/) by a path relative to the skill folder. " +
    "Use only when the skill's instructions call for that file.",
  input: z.strictObject({
    name: textArgument(MAX_SKILL_NAME_ARGUMENT, 'The skill name.'),
    path: textArgument(MAX_PATH_ARGUMENT, 'Path relative to the skill folder, e.g. references/REFERENCE.md.'),
  }),
  example: '{"name": "<skill>", "path": "references/REFERENCE.md"}',
  nulAllowed: ['path'],
  annotations: readsSkills("Read a skill's file"),
  async execute({ name, path }, context) {
    const resource = await context.resources.readResource(name, path);
    return {
      output: resource.content,
      summary: { skill: resource.name, path: resource.path, truncated: resource.truncated },
    };
  },
});

export const listResourcesTool = defineTool({
  name: 'skills.listResources',
  wireName: 'skills_listResources',
  description:
    "List a skill's files (paths relative to the skill folder, with sizes), optionally of one type: scripts, " +
    "references, assets or other. Use it to find the file a skill's instructions mention, then read it with " +
    'skills_readResource.',
  input: z.strictObject({
    name: textArgument(MAX_SKILL_NAME_ARGUMENT, 'The skill name.'),
    type: z
      .enum(RESOURCE_TYPES, { error: `must be one of ${RESOURCE_TYPES.join(', ')}` })
      .optional()
      .describe('Only files of this type.'),
  }),
  example: '{"name": "<skill>", "type": "references"}',
  annotations: readsSkills("List a skill's files"),
  async execute({ name, type }, context: ToolContext) {
    const skill = context.registry.get(name);
    const listing = await context.resources.listResources(skill.name, type);
    return {
      output: renderResourceListing(skill.name, type, listing),
      summary: {
        skill: skill.name,
        ...(type ? { type } : {}),
        count: listing.files.length,
        truncated: listing.truncated,
      },
    };
  },
});

/** One file a line, `path (size bytes)`; a notice when the listing was cut. */
export function renderResourceListing(name: string, type: ResourceType | undefined, listing: ResourceListing): string {
  const kind = type === undefined ? '' : ` of type ${type}`;
  if (listing.files.length === 0) return `The skill '${name}' has no files${kind} besides SKILL.md.`;
  const lines = [
    `Files${kind} in the skill '${name}' ` +
      `(${listing.files.length}${listing.truncated ? '+' : ''}), relative to its folder:`,
  ];
  for (const file of listing.files) lines.push(`- ${file.path} (${file.size} bytes)`);
  if (listing.truncated) {
    const narrow = type === undefined ? ` Ask for one type (${RESOURCE_TYPES.join(', ')}) to see the others.` : '';
    lines.push(`[Only the first ${listing.files.length} files are listed; the skill has more.${narrow}]`);
  }
  return lines.join('\n');
}
