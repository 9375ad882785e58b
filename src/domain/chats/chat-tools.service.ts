import { Inject, Injectable } from '@nestjs/common';
import type { Principal } from '../users/principal.js';
import { CHAT_STORE, type ChatStore } from './chat-store.js';
import type { ChatActivation } from './chat.types.js';
import { isUuid } from '../shared/uuid.js';
import { SkillRegistryService } from '@skillhost/nest';
import { chatNotFound } from './chat-errors.js';
import { chatView } from './chat-view.js';
import { type ToolCard, SkillToolsService } from './skill-tools.service.js';
import type { ToolExecution } from '@skillhost/ai-sdk';
import { SKILL_USAGE_RECORDER, type UsageRecorder } from '../skills/usage/skill-usage.js';
import { callerSkills, callUsageEvents } from '../skills/usage/turn-usage.js';

/** A tool call made through the API, and what it stored. */
export interface ToolRun {
  card: ToolCard;
  activatedSkills: ChatActivation[];
}

/**
 * The external-loop API: a team running its own model loop calls the skill tools against a chat, stored like a
 * model-made call (a code skill's with the calls it made, and the skills they activated). In the usage funnel the call
 * (and those of a code skill it ran) counts as the API's (`api`): the server cannot tell its client's model from its
 * user. No model of this server answered it, and it is no turn.
 */
@Injectable()
export class ChatToolsService {
  constructor(
    @Inject(CHAT_STORE) private readonly chats: ChatStore,
    private readonly registry: SkillRegistryService,
    private readonly skillTools: SkillToolsService,
    @Inject(SKILL_USAGE_RECORDER) private readonly usage: UsageRecorder,
  ) {}

  /** Runs one tool of the configured style against a chat. */
  async executeTool(principal: Principal, id: string, tool: string, args: unknown): Promise<ToolRun> {
    const context = isUuid(id) ? await this.chats.turnContext(id, principal.userId, 0) : null;
    if (context === null) throw chatNotFound(id);
    const snapshot = await chatView(this.registry, principal.userId, context);
    const calls: ToolExecution[] = [];
    const execution = await this.skillTools.executeForApi(tool, args, {
      snapshot,
      pins: context.pins,
      chatId: id,
      caller: { userId: principal.userId },
      onInnerCall: (call) => calls.push(call),
    });
    // As a turn stores a code skill's run: its card, then the cards of the calls it made; what they activated (before
    // it, as it happened) is the chat's too. The write finds out whether the chat still exists (deleted meanwhile:
    // CHAT_NOT_FOUND); reading files is harmless.
    const stored = await this.chats.recordTurn(
      id,
      principal.userId,
      [{ role: 'tool', content: '', toolCards: [execution.card, ...calls.map((call) => call.card)] }],
      [...calls, execution].flatMap(({ activated, version }) =>
        activated === undefined ? [] : [{ skillName: activated, how: 'tool' as const, version }],
      ),
    );
    if (stored === null) throw chatNotFound(id);
    // Counted once stored, as a turn is; `pins` holds what this call activated by now.
    if (snapshot !== undefined) {
      const skills = callerSkills(snapshot, context.pins);
      this.usage.record([execution, ...calls].flatMap((call) => callUsageEvents(call, 'api', skills)));
    }
    // The card as stored (a NUL in a path became U+FFFD): the answer and a later read agree.
    return { card: stored.messages[0].toolCards[0], activatedSkills: stored.activatedSkills };
  }

  /** Activates a skill with the configured style's activation tool, as `/name` does in a turn. */
  activateSkill(principal: Principal, id: string, name: string): Promise<ToolRun> {
    const { tool, args } = this.skillTools.style().activation(name);
    return this.executeTool(principal, id, tool.name, args);
  }
}
