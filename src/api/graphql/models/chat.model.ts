import { Field, ID, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import { CHAT_TITLE_DESCRIPTION } from '../../../domain/chats/chat-title.js';
import { GraphQLDateTime } from '../scalars/date-time.scalar.js';
import { PageOf } from './page.model.js';

export const ActivationHow = { explicit: 'explicit', tool: 'tool', fallback: 'fallback' } as const;
registerEnumType(ActivationHow, { name: 'ActivationHow', description: 'How a skill was first activated in a chat.' });

@ObjectType('ActivatedSkill', { description: 'A skill a chat has activated.' })
export class ActivatedSkillModel {
  @Field()
  name: string;

  @Field(() => ActivationHow)
  how: string;

  @Field(() => GraphQLDateTime)
  firstActivatedAt: Date;

  @Field(() => GraphQLDateTime)
  lastActivatedAt: Date;

  @Field(() => Int)
  count: number;

  @Field(() => String, { nullable: true, description: 'The version last activated (`sha256:…`), which the chat reads until it activates the skill again.' })
  version: string | null;
}

/** A chat; `activatedSkills` and `messages` are resolved (batched) only when asked for. */
@ObjectType('Chat')
export class ChatModel {
  @Field(() => ID)
  id: string;

  @Field(() => String, { nullable: true, description: CHAT_TITLE_DESCRIPTION })
  title: string | null;

  @Field(() => GraphQLDateTime)
  createdAt: Date;

  @Field(() => GraphQLDateTime)
  updatedAt: Date;
}

@ObjectType('ChatPage')
export class ChatPageModel extends PageOf(ChatModel) {}
