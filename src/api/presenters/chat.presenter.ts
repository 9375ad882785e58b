import type { Principal } from '../../domain/users/principal.js';
import type { OwnedChat } from '../../domain/chats/chat-store.js';
import type { Chat, ChatActivation, ChatMessage } from '../../domain/chats/chat.types.js';
import type { Page } from '../../domain/shared/page.js';
import { errorReaderOf, toErrorBody } from '../errors/app-exception.filter.js';
import type { CatalogueChoice, CatalogueLimits } from '@skillhost/core';
import type { ChatContext } from '../../domain/chats/chat-context.service.js';
import type { ToolRun } from '../../domain/chats/chat-tools.service.js';
import type { TurnEventShapes, TurnOutcome } from '../../domain/chats/turn-runner.js';

/**
 * Response shapes of the chat resources: the one place REST, GraphQL and the event stream take
 * them from, so the two APIs answer field for field alike.
 */
export function presentChat(chat: Chat) {
  return { id: chat.id, title: chat.title, createdAt: chat.createdAt, updatedAt: chat.updatedAt };
}

/** The operators' view of a chat: with its owner. */
export function presentOwnedChat({ chat, ownerName }: OwnedChat) {
  return { ...presentChat(chat), owner: { id: chat.ownerId, name: ownerName } };
}

export function presentChatDetail(chat: Chat, activatedSkills: readonly ChatActivation[]) {
  return { ...presentChat(chat), activatedSkills: activatedSkills.map(presentActivation) };
}

export function presentMessage(message: ChatMessage) {
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

export function presentActivation(activation: ChatActivation) {
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

export function presentTurn(turn: TurnOutcome) {
  return {
    userMessage: turn.userMessage === null ? null : presentMessage(turn.userMessage),
    assistantMessage: presentMessage(turn.assistantMessage),
    activatedSkills: turn.activatedSkills.map(presentActivation),
    invokedSkill: turn.invokedSkills[0] ?? null,
    invokedSkills: turn.invokedSkills,
    command: turn.command,
  };
}

/**
 * The `done` and `error` events of a turn, as every listener gets them (the SSE stream, GraphQL
 * subscribers on any instance): the turn's answer, and the error as its user may read it.
 */
export const turnEventShapes: TurnEventShapes = {
  done: presentTurn,
  error: (error: unknown, principal: Principal) => toErrorBody(error, errorReaderOf(principal)).body,
};

/** What a tool run through the API answers. */
export function presentToolRun(run: ToolRun) {
  return { toolCard: run.card, activatedSkills: run.activatedSkills.map(presentActivation) };
}

/** What the context route (and GraphQL's `chatContext`) shows: exactly what the model would get next. */
export function presentChatContext(context: ChatContext) {
  return {
    model: context.model,
    systemPrompt: context.systemPrompt,
    catalogue:
      context.catalogue === undefined ? null : presentCatalogueChoice(context.catalogue, context.catalogueLimits),
    tools: context.tools,
    activatedSkills: context.activatedSkills,
    activatedVersions: context.activatedVersions,
    skills: context.skills,
    commands: context.commands,
  };
}

/** What the context route shows of the catalogue a turn would list. */
function presentCatalogueChoice(choice: CatalogueChoice, limits: Pick<CatalogueLimits, 'budgetTokens' | 'maxSkills'>) {
  return {
    complete: choice.complete,
    listed: choice.listed,
    unlisted: choice.unlisted,
    tokens: choice.tokens,
    budgetTokens: limits.budgetTokens,
    maxSkills: limits.maxSkills,
  };
}
