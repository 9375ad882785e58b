import { randomUUID } from 'node:crypto';
import { BadRequestException, Body, Controller, HttpCode, Post } from '@nestjs/common';
import { type ChatAnswer, ChatService } from './chat.service.js';

const CHAT_ID = /^[A-Za-z0-9_-]{1,100}$/;
const MAX_MESSAGE = 100_000;

@Controller('chat')
export class ChatController {
  constructor(private readonly chats: ChatService) {}

  /**
   * `{ "message": "/skills-system-validation run the check", "chatId"?: "…" }` → the answer and the turn's tool cards.
   */
  @Post()
  @HttpCode(200)
  send(@Body() body: unknown): Promise<ChatAnswer> {
    const { message, chatId } = (body ?? {}) as { message?: unknown; chatId?: unknown };
    if (typeof message !== 'string' || message.trim() === '' || message.length > MAX_MESSAGE) {
      throw new BadRequestException(`message must be a non-empty string of at most ${MAX_MESSAGE} characters`);
    }
    if (chatId !== undefined && (typeof chatId !== 'string' || !CHAT_ID.test(chatId))) {
      throw new BadRequestException('chatId must be 1-100 letters, digits, _ or -');
    }
    return this.chats.send(chatId ?? randomUUID(), message);
  }
}
