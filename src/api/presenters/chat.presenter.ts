import type { ChatActivatedSkillEntity } from '../../infra/database/entities/chat-activated-skill.entity.js';
import type { ChatMessageEntity, StoredCommand } from '../../infra/database/entities/chat-message.entity.js';
import type { ChatEntity } from '../../infra/database/entities/chat.entity.js';
import type { OwnedChat, Page } from '../../infra/database/chat.repository.js';
import type { ToolCard } from '../../domain/chats/skill-tools.service.js';
import type { CatalogueChoice } from '../../domain/skills/ranking/catalogue-choice.js';

/**
 * Response shapes of the chat resources: the one place REST, GraphQL and the event stream take
 * them from, so the two APIs answer field for field alike.
 */
export function presentChat(chat: ChatEntity) {
  return { id: chat.id, title: chat.title, createdAt: chat.createdAt, updatedAt: chat.updatedAt };
}

/** The operators' view of a chat: with its owner. */
export function presentOwnedChat({ chat, ownerName }: OwnedChat) {
  return { ...presentChat(chat), owner: { id: chat.ownerId, name: ownerName } };
}

export function presentChatDetail(chat: ChatEntity, activatedSkills: readonly ChatActivatedSkillEntity[]) {
  return { ...presentChat(chat), activatedSkills: activatedSkills.map(presentActivation) };
}

export function presentMessage(message: ChatMessageEntity) {
  return {
    id: message.id,
    seq: message.seq,
    role: message.role,
    content: message.content,
    toolCards: message.toolCards,
    invokedSkill: message.invokedSkill,
    invokedSkills: message.invokedSkills ?? [],
    command: message.command ?? null,
    model: message.model,
    createdAt: message.createdAt,
  };
}

export function presentActivation(activation: ChatActivatedSkillEntity) {
  return {
    name: activation.skillName,
    how: activation.how,
    firstActivatedAt: activation.firstActivatedAt,
    lastActivatedAt: activation.lastActivatedAt,
    count: activation.activationCount,
    version: activation.versionDigest ?? null,
  };
}

export function presentPage<T, R>(page: Page<T>, present: (item: T) => R): Page<R> {
  return { ...page, items: page.items.map(present) };
}

/** What one turn answers (and the `done` event carries). */
export interface TurnOutcome {
  userMessage: ChatMessageEntity;
  assistantMessage: ChatMessageEntity;
  activatedSkills: readonly ChatActivatedSkillEntity[];
  invokedSkills: readonly string[];
  /** The command the message ran: its name, arguments, and the prompt the model got. */
  command: StoredCommand | null;
}

export function presentTurn(turn: TurnOutcome) {
  return {
    userMessage: presentMessage(turn.userMessage),
    assistantMessage: presentMessage(turn.assistantMessage),
    activatedSkills: turn.activatedSkills.map(presentActivation),
    invokedSkill: turn.invokedSkills[0] ?? null,
    invokedSkills: turn.invokedSkills,
    command: turn.command,
  };
}

/** What a tool run through the API answers. */
export function presentToolRun(run: { card: ToolCard; activatedSkills: readonly ChatActivatedSkillEntity[] }) {
  return { toolCard: run.card, activatedSkills: run.activatedSkills.map(presentActivation) };
}

/** What the context route shows of the catalogue a turn would list. */
export function presentCatalogueChoice(choice: CatalogueChoice, limits: { budgetTokens: number; maxSkills: number }) {
  return { complete: choice.complete, listed: choice.listed, unlisted: choice.unlisted, tokens: choice.tokens, budgetTokens: limits.budgetTokens, maxSkills: limits.maxSkills };
}
