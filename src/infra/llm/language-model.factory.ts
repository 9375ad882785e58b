import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { Injectable } from '@nestjs/common';
import { type LanguageModel, wrapLanguageModel } from 'ai';
import type { ModelConfig } from '../../config/app-config.js';
import { boundedToolInput } from '../../domain/chats/llm/bounded-tool-input.js';
import type { LanguageModels } from '../../domain/chats/llm/language-models.js';
import { nodeFetch } from './node-fetch.js';

/**
 * One AI SDK model object per configured model, built on first use; a model's tool input is bounded
 * (see bounded-tool-input.ts). The app gives it to ChatModule as `LANGUAGE_MODELS`, so a test or an app can put its own
 * in.
 */
@Injectable()
export class LanguageModelFactory implements LanguageModels {
  private readonly cache = new Map<string, LanguageModel>();

  get(config: ModelConfig): LanguageModel {
    let model = this.cache.get(config.name);
    if (model === undefined) {
      model = wrapLanguageModel({ model: build(config), middleware: boundedToolInput });
      this.cache.set(config.name, model);
    }
    return model;
  }
}

/** A provider's model, as wrapLanguageModel takes it. */
type ProviderModel = Parameters<typeof wrapLanguageModel>[0]['model'];

function build(config: ModelConfig): ProviderModel {
  switch (config.provider) {
    case 'openai-compatible':
      return createOpenAICompatible({
        name: config.name,
        baseURL: config.baseUrl,
        apiKey: config.apiKey,
        fetch: nodeFetch,
      }).chatModel(config.model);
    case 'anthropic':
      return createAnthropic({ baseURL: config.baseUrl, apiKey: config.apiKey ?? '', fetch: nodeFetch })(config.model);
  }
}
