import { Injectable } from '@nestjs/common';
import type { ChatActivation, ChatMessage } from '../../domain/chats/chat.types.js';
import type { Page } from '../../domain/shared/page.js';
import DataLoader from 'dataloader';
import type { Principal } from '../../domain/users/principal.js';
import { chatNotFound } from '../../domain/chats/chat-errors.js';
import { ChatsService } from '../../domain/chats/chats.service.js';

/** The batching loaders of one GraphQL operation, acting as its caller. */
export class OperationLoaders {
  /** Activated skills of chats the operation has already loaded (so owned by the caller). */
  readonly activatedSkills: DataLoader<string, ChatActivation[]>;
  private readonly messagePages = new Map<string, DataLoader<string, Page<ChatMessage>>>();

  constructor(
    private readonly chats: ChatsService,
    private readonly principal: Principal,
  ) {
    this.activatedSkills = new DataLoader(async (chatIds) => {
      const byChat = await this.chats.activatedSkills(chatIds);
      return chatIds.map((id) => byChat.get(id) ?? []);
    });
  }

  /** One loader per page window: every chat asking for the same `limit`/`offset` is served by one query. */
  messages(limit: number | undefined, offset: number | undefined): DataLoader<string, Page<ChatMessage>> {
    const key = `${limit}:${offset}`;
    let loader = this.messagePages.get(key);
    if (loader === undefined) {
      loader = new DataLoader<string, Page<ChatMessage>>(async (chatIds) => {
        const pages = await this.chats.messagePages(this.principal, chatIds, limit, offset);
        // A chat deleted since the operation loaded it is gone, as REST would say.
        return chatIds.map((id) => pages.get(id) ?? chatNotFound(id));
      });
      this.messagePages.set(key, loader);
    }
    return loader;
  }
}

/**
 * DataLoaders per GraphQL operation, so nested fields of a list of chats cost one query per field,
 * not one per chat. An operation is known by its context object (HTTP request or subscription),
 * and its loaders are made on first use and dropped with it; nothing is cached across operations.
 */
@Injectable()
export class ChatLoadersService {
  private readonly byOperation = new WeakMap<object, OperationLoaders>();

  constructor(private readonly chats: ChatsService) {}

  of(context: object, principal: Principal): OperationLoaders {
    let loaders = this.byOperation.get(context);
    if (loaders === undefined) this.byOperation.set(context, (loaders = new OperationLoaders(this.chats, principal)));
    return loaders;
  }
}
