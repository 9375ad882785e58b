import type { SkillsConfig } from '../options/skills-config.js';
import type { CatalogueSnapshot } from '../catalogue/catalogue-snapshot.js';
import type { CatalogueChoice } from '../catalogue/catalogue-choice.js';
import type { CatalogueChooser } from '../catalogue/catalogue-chooser.js';
import { assembleSystemPrompt, type PromptInputs } from '../chat/prompt-assembler.js';
import { searchTool } from './search-tool.js';
import type { ToolStyleSet } from './tool-styles.js';

/** What one turn's system prompt is made of, besides the base prompt. */
export interface SkillsPromptRequest {
  basePrompt: string;
  /** The caller's view of the catalogue. */
  snapshot: CatalogueSnapshot;
  chooser: Pick<CatalogueChooser, 'catalogue'>;
  skills: Pick<SkillsConfig, 'catalogueFormat' | 'includeLocation'>;
  /**
   * The tool style offered this turn; absent when the model gets no tools (an invoked skill's body then goes in the
   * prompt as `fallback`).
   */
  style?: ToolStyleSet;
  /** The skills the chat activated before this turn. */
  activated: readonly string[];
  /**
   * The user's words, the chat's last messages (weaker evidence), and the skills invoked or required this turn: what
   * ranks a partial catalogue.
   */
  message: { text: string; context?: string; requested?: readonly string[] };
  turn?: Pick<NonNullable<PromptInputs['skills']>, 'invoked' | 'fallback' | 'ran' | 'command' | 'commands' | 'kept'>;
}

/**
 * The system prompt of a turn with skills, and the catalogue it lists: the whole catalogue when
 * the view's skills fit the budget, else the ones ranked best for the message, after the activated
 * and the requested skills. The server's chats and `skillhost/ai-sdk` both build prompts with it.
 */
export function buildSkillsPrompt(request: SkillsPromptRequest): { system: string; catalogue: CatalogueChoice } {
  const { snapshot, style, activated, message } = request;
  const { catalogueFormat, includeLocation } = request.skills;
  const searchable = style?.byName(searchTool.name) !== undefined;
  const catalogue = request.chooser.catalogue(snapshot, {
    message: message.text,
    context: message.context ?? '',
    pinned: [...activated, ...(message.requested ?? [])],
    searchable,
  });
  const skills: PromptInputs['skills'] = {
    catalogue: catalogue.text,
    partial: !catalogue.complete,
    searchable,
    catalogueInPrompt: style?.catalogueInPrompt ?? true,
    layout: catalogueFormat === 'markdown' && includeLocation ? 'aloop' : 'standard',
    toolRules: style?.rules,
    activated,
    toolsAvailable: style !== undefined,
    ...request.turn,
  };
  return { system: assembleSystemPrompt({ basePrompt: request.basePrompt, skills }), catalogue };
}
