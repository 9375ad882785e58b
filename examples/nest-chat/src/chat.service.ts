import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { Inject, Injectable } from '@nestjs/common';
import { generateText, type LanguageModel, type ModelMessage, stepCountIs } from 'ai';
import { invokeSkills, skillSystemPrompt, skillTools, type ToolCard } from '@skillhost/ai-sdk';
import { SkillRegistryService, SkillResourcesService } from '@skillhost/nest';
import { Activations } from './activations.provider.js';
import { EXAMPLE_CONFIG, type ExampleConfig } from './example-config.js';

export interface ChatAnswer {
  chatId: string;
  answer: string;
  /** The skills the message invoked with `/name`. */
  invoked: string[];
  /** Every skill tool call of the turn, in order: what the user is shown. */
  cards: ToolCard[];
}

/** This app's own model loop (the AI SDK's `generateText`), with Skillhost's skills added to it. */
@Injectable()
export class ChatService {
  private readonly model: LanguageModel;
  /** The example keeps its conversations in memory; a real app has its own tables. */
  private readonly histories = new Map<string, ModelMessage[]>();

  constructor(
    private readonly registry: SkillRegistryService,
    private readonly resources: SkillResourcesService,
    private readonly activations: Activations,
    @Inject(EXAMPLE_CONFIG) config: ExampleConfig,
  ) {
    const provider = createOpenAICompatible({
      name: 'example',
      baseURL: config.model.baseUrl,
      apiKey: config.model.apiKey,
    });
    this.model = provider(config.model.name);
  }

  async send(chatId: string, message: string): Promise<ChatAnswer> {
    const cards: ToolCard[] = [];
    // One catalogue for the whole turn (the prompt, `/name` and the tools), even if the skills are reloaded meanwhile.
    const skills = {
      registry: this.registry,
      resources: this.resources,
      snapshot: this.registry.snapshot,
      onCard: (card: ToolCard) => cards.push(card),
      activations: { store: this.activations, chatId },
    };
    // What the chat activated before this turn, then `/skill-name …`: activated before the model runs, its card shown
    // either way.
    const activated = (await this.activations.activated(chatId)).map((a) => a.skillName);
    const invoked = await invokeSkills({ ...skills, message });
    const system = skillSystemPrompt({
      ...skills,
      basePrompt: 'You are a helpful assistant.',
      message: invoked.text,
      activated,
      invoked: invoked.skills,
    });
    const messages = [...(this.histories.get(chatId) ?? []), ...invoked.messages];
    const result = await generateText({
      model: this.model,
      system,
      messages,
      tools: skillTools({ ...skills, userMessage: invoked.text }),
      stopWhen: stepCountIs(8),
    });
    this.histories.set(chatId, [...messages, ...result.response.messages]);
    return { chatId, answer: result.text, invoked: invoked.skills, cards };
  }
}
