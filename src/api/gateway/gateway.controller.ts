import { Body, Controller, Get, Headers, HttpCode, Inject, Param, Post, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { findModel } from '../../domain/chats/chat-models.js';
import type { ChatEvent } from '../../domain/chats/chat-events.service.js';
import {
  type GatewayAnswer,
  GatewayService,
  type PreparedRequest,
} from '../../domain/chats/gateway/gateway.service.js';
import type { Principal } from '../../domain/users/principal.js';
import { errorReaderOf, toErrorBody } from '../errors/app-exception.filter.js';
import { presentOpenAIError } from '../errors/openai-error.js';
import { CurrentPrincipal, RequireScope } from '../http/decorators/auth.decorators.js';
import { CountsAsTurn } from '../http/decorators/rate-limit.decorators.js';
import { RequireFeature } from '../http/guards/feature.guard.js';
import { openEventStream } from '../http/event-stream.js';
import { type GatewayHeaders, readChatCompletion, readResponses } from './openai-requests.js';
import {
  ChatChunks,
  newCompletionId,
  presentChatCompletion,
  presentModels,
  presentResponse,
  type ResponseRequestEcho,
  skillhostWork,
} from './openai-presenter.js';
import { ResponseEvents } from './response-events.js';

/** Where the gateway is: OpenAI's `/v1` under `/openai`, so Skillhost's own `/v1` is untouched. */
export const GATEWAY_PATH = 'openai/v1';

/** The request header naming the conversation (one of the caller's chats); every answer carries it back. */
export const CONVERSATION_HEADER = 'x-skillhost-conversation';
/** The request header asking for Skillhost's work in the `skillhost` field (`true` or `1`). */
export const SHOW_WORK_HEADER = 'x-skillhost-show-work';

/**
 * OpenAI's API at `/openai/v1`, with the team's skills added to every request (GatewayService): chat completions,
 * responses, models. Behind the same API keys (`Authorization: Bearer skh_…`), rate limits, turn limits and feature
 * switches as every route; errors in OpenAI's shape (AppExceptionFilter). Documented in the README, not in
 * /openapi.json: the wire format is OpenAI's.
 */
@Controller(GATEWAY_PATH)
@RequireScope('chats')
@RequireFeature('gateway')
@ApiExcludeController()
export class GatewayController {
  private readonly started = new Date();

  constructor(
    private readonly gateway: GatewayService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('models')
  models() {
    return presentModels(Object.keys(this.config.app.models).sort(), this.started);
  }

  @Get('models/:model')
  model(@Param('model') name: string) {
    const model = findModel(this.config.app, name)!;
    return presentModels([model.name], this.started).data[0];
  }

  @Post('chat/completions')
  @HttpCode(200)
  @CountsAsTurn()
  async chatCompletions(
    @CurrentPrincipal() principal: Principal,
    @Body() body: unknown,
    @Headers() headers: Record<string, string | undefined>,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const call = readChatCompletion(body, gatewayHeaders(headers), this.config.app.gateway);
    const prepared = await this.gateway.prepare(principal, call.request);
    const work = this.showWork(headers);
    const id = newCompletionId();
    reply.header(CONVERSATION_HEADER, prepared.chatId);
    if (!call.stream)
      return presentChatCompletion(id, prepared.createdAt, await this.gateway.respond(principal, prepared), work);
    const chunks = new ChatChunks(id, prepared.createdAt, prepared.model);
    const out = openEventStream(reply);
    out.data(chunks.first());
    const answer = await this.streamed(
      principal,
      prepared,
      (event) => {
        if (event.event === 'text-delta') out.data(chunks.text((event.data as { text: string }).text));
      },
      (error) => out.data(error),
    );
    if (answer !== undefined) {
      for (const chunk of chunks.last(answer, work)) out.data(chunk);
      if (call.includeUsage) out.data(chunks.usage(answer));
    }
    out.end('data: [DONE]\n\n');
    return undefined;
  }

  @Post('responses')
  @HttpCode(200)
  @CountsAsTurn()
  async responses(
    @CurrentPrincipal() principal: Principal,
    @Body() body: unknown,
    @Headers() headers: Record<string, string | undefined>,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const call = readResponses(body, gatewayHeaders(headers), this.config.app.gateway);
    const prepared = await this.gateway.prepare(principal, call.request);
    const work = this.showWork(headers);
    const { options } = call.request;
    const echo: ResponseRequestEcho = {
      previousResponseId: call.request.previousResponseId ?? null,
      store: call.request.response?.store ?? true,
      temperature: options.temperature ?? null,
      topP: options.topP ?? null,
      maxOutputTokens: options.maxOutputTokens ?? null,
    };
    reply.header(CONVERSATION_HEADER, prepared.chatId);
    const started = {
      id: prepared.responseId!,
      model: prepared.model,
      createdAt: prepared.createdAt,
      instructions: call.request.response?.instructions ?? null,
    };
    const extra = (answer: GatewayAnswer) => (work ? { skillhost: skillhostWork(answer) } : {});
    if (!call.stream) {
      const answer = await this.gateway.respond(principal, prepared);
      return presentResponse(answer.response!, echo, extra(answer));
    }
    const out = openEventStream(reply);
    const events = new ResponseEvents(started.id, (type, data) => out.event(type, data));
    events.created(presentResponse(started, echo));
    const answer = await this.streamed(
      principal,
      prepared,
      (event) => {
        if (event.event === 'text-delta') events.text((event.data as { text: string }).text);
      },
      (error) => events.failed(error),
    );
    if (answer !== undefined) events.completed(answer.output, presentResponse(answer.response!, echo, extra(answer)));
    out.end();
    return undefined;
  }

  @Get('responses/:id')
  async response(@CurrentPrincipal() principal: Principal, @Param('id') id: string) {
    const stored = await this.gateway.getResponse(principal, id);
    return presentResponse(stored, {
      previousResponseId: null,
      store: true,
      temperature: null,
      topP: null,
      maxOutputTokens: null,
    });
  }

  /**
   * A streamed turn; a failure once the stream has begun goes to `onError` in OpenAI's error shape (OpenAI's own
   * streams end on one): undefined then.
   */
  private async streamed(
    principal: Principal,
    prepared: PreparedRequest,
    onEvent: (event: ChatEvent) => void,
    onError: (error: ReturnType<typeof presentOpenAIError>) => void,
  ): Promise<GatewayAnswer | undefined> {
    try {
      return await this.gateway.respond(principal, prepared, onEvent);
    } catch (error) {
      const { status, body } = toErrorBody(error, errorReaderOf(principal));
      onError(presentOpenAIError(status, body));
      return undefined;
    }
  }

  private showWork(headers: Record<string, string | undefined>): boolean {
    const asked = headers[SHOW_WORK_HEADER]?.trim().toLowerCase();
    return asked === undefined ? this.config.app.gateway.showWork : asked === 'true' || asked === '1';
  }
}

function gatewayHeaders(headers: Record<string, string | undefined>): GatewayHeaders {
  const conversation = headers[CONVERSATION_HEADER]?.trim();
  return { conversation: conversation === '' ? undefined : conversation };
}
