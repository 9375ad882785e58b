import { Field, ObjectType } from '@nestjs/graphql';
import { GraphQLJSON } from '../scalars/json.scalar.js';

@ObjectType('ToolDefinition')
export class ToolDefinitionModel {
  @Field({ description: 'Canonical name, such as `skills.activate`.' })
  name: string;

  @Field({ description: 'The name model APIs see, such as `skills_activate`.' })
  wireName: string;

  @Field()
  description: string;

  @Field(() => GraphQLJSON, { description: 'JSON Schema of the arguments.' })
  inputSchema: unknown;
}

@ObjectType('ContextCommand', { description: 'A command the system prompt lists.' })
export class ContextCommandModel {
  @Field()
  name: string;

  @Field()
  description: string;

  @Field(() => String, { nullable: true })
  argumentHint: string | null;

  @Field(() => [String])
  requiredSkills: string[];
}

@ObjectType('ChatContext', { description: 'Exactly what the model would get next in a chat (the twin of GET /v1/chats/{id}/context).' })
export class ChatContextModel {
  @Field(() => String, { nullable: true })
  model: string | null;

  @Field()
  systemPrompt: string;

  @Field(() => [ToolDefinitionModel], { description: 'The tools of the configured style, exactly as the model is sent them; empty when they are not offered.' })
  tools: ToolDefinitionModel[];

  @Field(() => [String], { description: 'Names of the skills the chat has activated.' })
  activatedSkills: string[];

  @Field(() => [ContextCommandModel], { description: 'The commands the system prompt lists.' })
  commands: ContextCommandModel[];
}
