import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Put, Query, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AdminOnly, CurrentPrincipal, RequireScope } from './decorators/auth.decorators.js';
import type { Principal } from '../../domain/users/principal.js';
import { ErrorCode, KNOWN_TOOL_NAMES } from '@skillhost/core';
import { RequireFeature } from './guards/feature.guard.js';
import { openEventStream } from './event-stream.js';
import { PageQueryDto } from './dto/page-query.dto.js';
import { ApiErrors } from './openapi/api-errors.decorator.js';
import { CountsAsTurn } from './decorators/rate-limit.decorators.js';
import type { ChatEvent } from '../../domain/chats/chat-events.service.js';
import type { TurnTiming } from '../../domain/chats/chat-metrics.js';
import { ChatContextService } from '../../domain/chats/chat-context.service.js';
import { ChatToolsService } from '../../domain/chats/chat-tools.service.js';
import {
  presentChat,
  presentChatContext,
  presentChatDetail,
  presentMessage,
  presentOwnedChat,
  presentPage,
  presentToolRun,
  presentTurn,
} from '../presenters/chat.presenter.js';
import { ChatsService } from '../../domain/chats/chats.service.js';
import { TurnRunner } from '../../domain/chats/turn-runner.js';
import { ContextQueryDto, CreateChatDto, SendMessageDto } from './dto/chat.dto.js';
import { SkillFilterBodyDto, SkillFilterResultDto } from './dto/store.dto.js';
import { ToolArguments } from './decorators/tool-arguments.decorator.js';
import {
  ChatContextDto,
  ChatDetailDto,
  ChatDto,
  ChatPageDto,
  MessagePageDto,
  OwnedChatPageDto,
  ToolRunDto,
  TurnDto,
} from './dto/chat-responses.dto.js';

/** The caller's chats: another user's chat answers 404 CHAT_NOT_FOUND, exactly as a missing one. */
@Controller('v1/chats')
@RequireScope('chats')
@ApiTags('chats')
export class ChatController {
  constructor(
    private readonly chats: ChatsService,
    private readonly turns: TurnRunner,
    private readonly contexts: ChatContextService,
    private readonly tools: ChatToolsService,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Start a chat' })
  @ApiCreatedResponse({ type: ChatDto })
  async create(@CurrentPrincipal() principal: Principal, @Body() body: CreateChatDto) {
    return presentChat(await this.chats.createChat(principal, body.title));
  }

  @Get()
  @ApiOperation({ summary: "The caller's chats, newest first" })
  @ApiOkResponse({ type: ChatPageDto })
  async list(@CurrentPrincipal() principal: Principal, @Query() query: PageQueryDto) {
    return presentPage(await this.chats.listChats(principal, query.limit, query.offset), presentChat);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One chat with its activated skills' })
  @ApiOkResponse({ type: ChatDetailDto })
  @ApiErrors(ErrorCode.CHAT_NOT_FOUND)
  async get(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    const { chat, activatedSkills } = await this.chats.getChatWithActivations(principal, id);
    return presentChatDetail(chat, activatedSkills);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a chat with its messages and activations' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors(ErrorCode.CHAT_NOT_FOUND)
  async remove(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    await this.chats.deleteChat(principal, id);
  }

  @Get(':id/messages')
  @ApiOperation({ summary: "A chat's messages, in order" })
  @ApiOkResponse({ type: MessagePageDto })
  @ApiErrors(ErrorCode.CHAT_NOT_FOUND)
  async messages(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Query() query: PageQueryDto) {
    return presentPage(await this.chats.listMessages(principal, id, query.limit, query.offset), presentMessage);
  }

  /**
   * One turn. With `Accept: text/event-stream` the same turn streams as server-sent events
   * (`tool-call`, `tool-result`, `text-delta`, then `done` with the JSON answer, or `error`).
   */
  @Post(':id/messages')
  @CountsAsTurn()
  @ApiOperation({
    summary: 'Run one turn',
    description:
      'Sends the message, runs the model with the skill tools, and stores the turn in one statement; a turn ' +
      'that fails stores nothing. ' +
      'With `Accept: text/event-stream` the same turn streams as server-sent events (200); problems found ' +
      'before it starts still answer as JSON errors.',
  })
  @ApiCreatedResponse({
    type: TurnDto,
    headers: {
      'server-timing': {
        description: "In ms: `total`, `model`, `overhead`, and the overhead's `db` and `skills` parts.",
        schema: { type: 'string' },
      },
    },
  })
  @ApiOkResponse({
    description:
      'With `Accept: text/event-stream`: `tool-call` `{id, tool, args}`, `tool-result` (a tool card), ' +
      '`text-delta` `{text}`, then `done` (the JSON answer of the 201) or `error` `{code, message}`.',
    content: {
      'text/event-stream': {
        schema: { type: 'string' },
        example: 'event: text-delta\ndata: {"text":"Hello"}\n\nevent: done\ndata: {"userMessage":{…}}\n\n',
      },
    },
  })
  @ApiErrors(ErrorCode.CHAT_NOT_FOUND, ErrorCode.MODEL_NOT_CONFIGURED, ErrorCode.MODEL_ERROR)
  async send(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Body() body: SendMessageDto,
    @Headers('accept') accept: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    if (!accept?.includes('text/event-stream')) {
      const turn = await this.turns.run(principal, id, body);
      reply.status(201).header('server-timing', serverTiming(turn.timing));
      return presentTurn(turn);
    }
    // Problems found before the turn starts (unknown chat, no model) still answer as plain JSON errors.
    await this.turns.prepare(principal, id, body);
    const out = openEventStream(reply);
    // The turn ends the stream with `done` or `error`; a failure has been written as the latter.
    await this.turns
      .run(principal, id, body, ({ event, data }: ChatEvent) => out.event(event, data))
      .catch(() => undefined);
    out.end();
    return undefined;
  }

  /** For teams running their own model loop: what the model would get next. */
  @Get(':id/context')
  @ApiTags('tools')
  @ApiOperation({
    summary: 'What the model would get next',
    description:
      'For teams running their own model loop. With `message`, the catalogue a turn with that message would list.',
  })
  @ApiOkResponse({ type: ChatContextDto })
  @ApiErrors(ErrorCode.CHAT_NOT_FOUND)
  async context(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Query() query: ContextQueryDto) {
    const tools = query.tools === undefined ? undefined : query.tools !== 'false';
    return presentChatContext(
      await this.contexts.getContext(principal, id, { model: query.model, tools, message: query.message }),
    );
  }

  @Get(':id/skills')
  @RequireFeature('skills')
  @ApiOperation({ summary: "This chat's skill filter and the skills it offers" })
  @ApiOkResponse({ type: SkillFilterResultDto })
  @ApiErrors(ErrorCode.CHAT_NOT_FOUND)
  skillFilter(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    return this.chats.getSkillFilter(principal, id);
  }

  @Put(':id/skills')
  @RequireFeature('skills')
  @ApiOperation({
    summary: "Narrow this chat's catalogue",
    description:
      '`include` (only these) and `exclude` (never these): skill names or `prefix-*` patterns, on top of the ' +
      "user's own filter (`PUT /v1/me/skills`). Send `{}` to remove it. `GET /v1/chats/:id/context` shows the " +
      'result.',
  })
  @ApiOkResponse({ type: SkillFilterResultDto })
  @ApiErrors(ErrorCode.CHAT_NOT_FOUND, ErrorCode.VALIDATION_FAILED)
  setSkillFilter(@CurrentPrincipal() principal: Principal, @Param('id') id: string, @Body() body: SkillFilterBodyDto) {
    return this.chats.setSkillFilter(principal, id, body);
  }

  /**
   * Runs one tool of the configured style (`app.tools.style`): `skills.activate`,
   * `skills.readResource`, `skills.listResources`, `activate_skill`, `load_skill` or `use_skill`,
   * and `skills.runScript` while scripts are enabled.
   * The body is the tool's arguments, checked by the tool's own schema.
   */
  @Post(':id/tools/:tool')
  @HttpCode(200)
  @RequireFeature(['skills', 'tools'])
  @ApiTags('tools')
  @ApiOperation({
    summary: 'Run a skill tool against the chat',
    description:
      'Runs one tool of the configured style with the body as its arguments, stored like a model-made call. ' +
      "Arguments that do not fit the tool's schema (as `GET /v1/chats/{id}/context` shows it) answer 400; a " +
      'call that runs and fails is an error card, not an error answer.',
  })
  @ApiParam({
    name: 'tool',
    enum: [...KNOWN_TOOL_NAMES],
    description: "A tool of the configured style, by its canonical name (the context's `tools[].name`).",
  })
  @ApiBody({
    description: "The tool's arguments.",
    schema: { type: 'object', additionalProperties: true },
    examples: {
      'skills.activate': { value: { name: 'pdf' } },
      'skills.readResource': { value: { name: 'pdf', path: 'references/REFERENCE.md' } },
      'skills.listResources': { value: { name: 'pdf', type: 'scripts' } },
      use_skill: { value: { input: 'extract the tables from this PDF' } },
      'skills.runScript': { value: { name: 'pdf', path: 'scripts/extract.py', args: ['form.pdf'] } },
    },
  })
  @ApiOkResponse({ type: ToolRunDto })
  @ApiErrors(ErrorCode.CHAT_NOT_FOUND, ErrorCode.TOOL_NOT_FOUND, ErrorCode.SCRIPTS_DISABLED)
  async runTool(
    @CurrentPrincipal() principal: Principal,
    @Param('id') id: string,
    @Param('tool') tool: string,
    @ToolArguments() args: unknown,
  ) {
    return presentToolRun(await this.tools.executeTool(principal, id, tool, args));
  }
}

/** Every user's chats, for operators. */
@Controller('v1/admin/chats')
@AdminOnly()
@ApiTags('admin')
export class AdminChatsController {
  constructor(private readonly chats: ChatsService) {}

  @Get()
  @ApiOperation({ summary: "Every user's chats, newest first" })
  @ApiOkResponse({ type: OwnedChatPageDto })
  async list(@Query() query: PageQueryDto) {
    return presentPage(await this.chats.listAllChats(query.limit, query.offset), presentOwnedChat);
  }
}

/** `Server-Timing` for a turn, in ms: total, model, own overhead, and the overhead's database and skill-tool parts. */
function serverTiming(timing: TurnTiming): string {
  return (
    `total;dur=${timing.totalMs.toFixed(2)}, model;dur=${timing.modelMs.toFixed(2)}, ` +
    `overhead;dur=${timing.overheadMs.toFixed(2)}, db;dur=${timing.dbMs.toFixed(2)}, ` +
    `skills;dur=${timing.skillsMs.toFixed(2)}`
  );
}
