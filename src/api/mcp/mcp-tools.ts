import {
  activateSkillTool,
  type CatalogueChoice,
  type CatalogueSnapshot,
  readResourceTool,
  searchTool,
  type SkillTool,
} from '@skillhost/core';

/**
 * What `/mcp` offers a client that does not know the Skills extension (every agent today): level 1
 * of progressive disclosure in `activate_team_skill`'s description and in the server's
 * instructions, level 2 by `activate_team_skill`, level 3 by `read_skill_file`, and
 * `search_skills` while the catalogue is partial. Each is a chat tool under an MCP name
 * (`activate_skill`, `skills.readResource`, `skills.search`): one definition, one schema.
 */

/**
 * The activation tool's name over MCP. Not `activate_skill`: Gemini CLI has a built-in tool of that
 * name, and run headless it drops every MCP tool whose unprefixed name is one of its excluded
 * built-ins, so Skillhost's tool never reached the model there.
 */
export const MCP_ACTIVATE_TOOL = 'activate_team_skill';

/** The search tool's name over MCP, as the partial catalogue's note gives it. */
export const MCP_SEARCH_TOOL = 'search_skills';

/** The most the first line of the instructions takes: Codex cuts it at 247 characters and an ellipsis. */
const SUMMARY_MAX = 239;

/**
 * The first line of the instructions: what the skills are, as many of their names as fit (so a
 * model that sees only this line knows what to look for), and the tool that lists them all.
 */
export function instructionsSummary(listed: readonly string[]): string {
  const tail =
    `: instructions to follow when a task matches a skill; ${MCP_ACTIVATE_TOOL} lists them and returns one's ` +
    `instructions.`;
  const lead = "This team's Agent Skills";
  if (listed.length === 0) return lead + tail;
  let names = '';
  for (const [index, name] of listed.entries()) {
    const more = index < listed.length - 1 ? ', …' : '';
    const next = names === '' ? name : `${names}, ${name}`;
    if (`${lead} (${next}${more})${tail}`.length > SUMMARY_MAX) {
      names = names === '' ? '…' : `${names}, …`;
      break;
    }
    names = next;
  }
  return `${lead} (${names})${tail}`;
}

export const readSkillFileTool: SkillTool = {
  ...readResourceTool,
  name: 'read_skill_file',
  wireName: 'read_skill_file',
  description:
    `Read one of a skill's files other than SKILL.md (references/, assets/, scripts/, examples…) by its path ` +
    `relative to the skill folder, as ${MCP_ACTIVATE_TOOL} lists them in <skill_resources>. Use it when the ` +
    `skill's instructions call for that file.`,
};

export const searchSkillsTool: SkillTool = { ...searchTool, name: MCP_SEARCH_TOOL, wireName: MCP_SEARCH_TOOL };

/**
 * The tools for a view and the catalogue it lists (`search`: offered even when everything is listed, `[app.skills]
 * search_tool = "always"`).
 */
export function mcpTools(view: CatalogueSnapshot, catalogue: CatalogueChoice, search: boolean): SkillTool[] {
  const activate = {
    ...activateSkillTool(view, !catalogue.complete, availableSkills(catalogue), MCP_SEARCH_TOOL),
    name: MCP_ACTIVATE_TOOL,
    wireName: MCP_ACTIVATE_TOOL,
  };
  return [activate, readSkillFileTool, ...(search || !catalogue.complete ? [searchSkillsTool] : [])];
}

/** The catalogue as the tool's description and the instructions end with. */
function availableSkills(catalogue: CatalogueChoice): string {
  if (catalogue.listed.length === 0 && catalogue.complete) return 'No skills are available.';
  return `Available skills:\n${catalogue.text}`;
}

/**
 * What the server tells every client at initialisation: how to use the skills, then as much of the
 * catalogue as fits in `maxChars`, whole entries only, and a closing line naming what is left out.
 * The first line stands alone and stays under 240 characters: a client that defers MCP tools
 * (Codex with its newer models) shows the model only that line, cut there; Claude Code shows the
 * model the instructions (its first 4096 characters) but not the tools' descriptions.
 */
export function mcpInstructions(catalogue: CatalogueChoice, maxChars: number): string {
  const head = [
    instructionsSummary(catalogue.listed),
    `Call ${MCP_ACTIVATE_TOOL} with the skill's name before you start such a task, and follow the instructions ` +
      `it returns; read the files they mention with read_skill_file.`,
    '',
  ].join('\n');
  if (catalogue.listed.length === 0) return `${head}\n${availableSkills(catalogue)}`;
  // A markdown catalogue is one line a skill, then (when partial) one line of note.
  const lines = catalogue.text.split('\n');
  const entries = lines.slice(0, catalogue.listed.length);
  const note = lines.slice(catalogue.listed.length).join('\n');
  const kept: string[] = [];
  let length = head.length + '\nAvailable skills:\n'.length;
  for (const [index, entry] of entries.entries()) {
    // Each entry leaves room for what would close the list after it: the catalogue's own note after the last, ours
    // after any other.
    const closingRoom = index === entries.length - 1 ? note.length + 1 : CLOSING_ROOM;
    if (length + entry.length + 1 + closingRoom > maxChars) break;
    kept.push(entry);
    length += entry.length + 1;
  }
  const left = entries.length - kept.length;
  const closing =
    left > 0
      ? [
          `(${left} more ${left === 1 ? 'skill is' : 'skills are'} listed in ${MCP_ACTIVATE_TOOL}'s ` +
            `description${
              catalogue.complete ? '' : `; ${catalogue.unlisted} more are found with ${MCP_SEARCH_TOOL}`
            }.)`,
        ]
      : note === ''
        ? []
        : [note];
  return `${head}\nAvailable skills:\n${[...kept, ...closing].join('\n')}`;
}

/** The most a closing line takes: counts of up to five digits each. */
const CLOSING_ROOM = 140;
