import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { type LanguageModel, wrapLanguageModel } from 'ai';
import { APP_CONFIG, type AppConfig, type ModelConfig } from '../../config/app-config.js';
import { boundedToolInput } from '../../domain/chats/llm/bounded-tool-input.js';
import type { LanguageModels } from '../../domain/chats/llm/language-models.js';
import type { Dispatcher } from 'undici';
import { type ModelFetch, modelDispatcher, modelFetch } from './model-fetch.js';
import { modelCallSpans } from './model-call-spans.js';

/**
 * One AI SDK model object per configured model, built on first use; a model's tool input is bounded
 * (see bounded-tool-input.ts). The app gives it to ChatModule as `LANGUAGE_MODELS`, so a test or an app can put its own
 * in.
 */
@Injectable()
export class LanguageModelFactory implements LanguageModels, OnApplicationShutdown {
  private readonly cache = new Map<string, LanguageModel>();
  /** Every model call's connections (kept alive) and the operator's proxies. */
  private readonly dispatcher: Dispatcher;
  private readonly fetch: ModelFetch;
  /** `[app.telemetry]` names an endpoint: each model call is a span (off, the models are not wrapped for it). */
  private readonly traced: boolean;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.dispatcher = modelDispatcher(config.app.proxy);
    this.fetch = modelFetch(this.dispatcher);
    this.traced = config.app.telemetry.endpoint !== '';
  }

  get(config: ModelConfig): LanguageModel {
    let model = this.cache.get(config.name);
    if (model === undefined) {
      model = wrapLanguageModel({
        model: build(config, this.fetch),
        middleware: this.traced ? [modelCallSpans(config), boundedToolInput] : boundedToolInput,
      });
      this.cache.set(config.name, model);
    }
    return model;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.dispatcher.destroy();
  }
}

/** A provider's model, as wrapLanguageModel takes it. */
type ProviderModel = Parameters<typeof wrapLanguageModel>[0]['model'];

function build(config: ModelConfig, fetch: ModelFetch): ProviderModel {
  switch (config.provider) {
    case 'openai-compatible':
      return createOpenAICompatible({
        name: config.name,
        baseURL: config.baseUrl,
        apiKey: config.apiKey,
        fetch,
      }).chatModel(config.model);
    case 'anthropic':
      return createAnthropic({ baseURL: config.baseUrl, apiKey: config.apiKey ?? '', fetch })(config.model);
  }
}
