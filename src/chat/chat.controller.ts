import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { toErrorBody } from '../common/app-exception.filter.js';
import { RequireFeature } from '../common/feature.guard.js';
import { presentActivation, presentMessage, ChatService, type TurnEvent, type TurnTiming } from './chat.service.js';
import { ActivateToolDto, ContextQueryDto, CreateChatDto, PageQueryDto, ReadResourceToolDto, SendMessageDto } from './dto/chat.dto.js';

@Controller('v1/chats')
export class ChatController {
  constructor(private readonly chats: ChatService) {}

  @Post()
  async create(@Body() body: CreateChatDto) {
    return presentChat(await this.chats.createChat(body.title));
  }

  @Get()
  async list(@Query() query: PageQueryDto) {
    const page = await this.chats.listChats(query.limit, query.offset);
    return { ...page, items: page.items.map(presentChat) };
  }

  @Get(':id')
  async get(@Param('id') id: string) {
    const { chat, activatedSkills } = await this.chats.getChat(id);
    return { ...presentChat(chat), activatedSkills: activatedSkills.map(presentActivation) };
  }

  @Delete(':id')
  @HttpCode(204)
  async remove(@Param('id') id: string): Promise<void> {
    await this.chats.deleteChat(id);
  }

  @Get(':id/messages')
  async messages(@Param('id') id: string, @Query() query: PageQueryDto) {
    const page = await this.chats.listMessages(id, query.limit, query.offset);
    return { ...page, items: page.items.map(presentMessage) };
  }

  /**
   * One turn. With `Accept: text/event-stream` the same turn streams as server-sent events
   * (`tool-call`, `tool-result`, `text-delta`, then `done` with the JSON answer, or `error`).
   */
  @Post(':id/messages')
  async send(@Param('id') id: string, @Body() body: SendMessageDto, @Headers('accept') accept: string | undefined, @Res({ passthrough: true }) reply: FastifyReply) {
    if (!accept?.includes('text/event-stream')) {
      const { timing, ...turn } = await this.chats.sendMessage(id, body);
      reply.status(201).header('server-timing', serverTiming(timing));
      return turn;
    }
    // Problems found before the turn starts (unknown chat, no model) still answer as plain JSON errors.
    await this.chats.prepareTurn(id, body);
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-accel-buffering': 'no' });
    // A client that goes away mid-turn must not crash anything: the turn still completes and is stored.
    raw.on('error', () => undefined);
    const write = (event: string, data: unknown) => {
      if (!raw.destroyed && !raw.writableEnded) raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    };
    try {
      const { timing: _, ...result } = await this.chats.sendMessage(id, body, (event: TurnEvent) => write(event.event, event.data));
      write('done', result);
    } catch (error) {
      write('error', toErrorBody(error).body);
    } finally {
      if (!raw.destroyed) raw.end();
    }
    return undefined;
  }

  /** For teams running their own model loop: what the model would get next. */
  @Get(':id/context')
  context(@Param('id') id: string, @Query() query: ContextQueryDto) {
    return this.chats.getContext(id, { model: query.model, tools: query.tools === undefined ? undefined : query.tools !== 'false' });
  }

  @Post(':id/tools/skills.activate')
  @HttpCode(200)
  @RequireFeature(['skills', 'tools'])
  activate(@Param('id') id: string, @Body() body: ActivateToolDto) {
    return this.chats.executeTool(id, 'skills.activate', { name: body.name });
  }

  @Post(':id/tools/skills.readResource')
  @HttpCode(200)
  @RequireFeature(['skills', 'tools'])
  readResource(@Param('id') id: string, @Body() body: ReadResourceToolDto) {
    return this.chats.executeTool(id, 'skills.readResource', { name: body.name, path: body.path });
  }
}

/** `Server-Timing` for a turn, in ms: total, model, own overhead, and the overhead's database and skill-tool parts. */
function serverTiming(timing: TurnTiming): string {
  return `total;dur=${timing.totalMs.toFixed(2)}, model;dur=${timing.modelMs.toFixed(2)}, overhead;dur=${timing.overheadMs.toFixed(2)}, db;dur=${timing.dbMs.toFixed(2)}, skills;dur=${timing.skillsMs.toFixed(2)}`;
}

function presentChat(chat: { id: string; title: string | null; createdAt: Date; updatedAt: Date }) {
  return { id: chat.id, title: chat.title, createdAt: chat.createdAt, updatedAt: chat.updatedAt };
}
