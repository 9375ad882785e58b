import { Field, ObjectType } from '@nestjs/graphql';
import { ActivatedSkillModel } from './chat.model.js';
import { MessageCommandModel, MessageModel, ToolCardModel } from './message.model.js';

@ObjectType('Turn', { description: "One turn's answer, as REST's POST /v1/chats/{id}/messages answers it (and the `done` event carries)." })
export class TurnModel {
  @Field(() => MessageModel)
  userMessage: MessageModel;

  @Field(() => MessageModel)
  assistantMessage: MessageModel;

  @Field(() => [ActivatedSkillModel], { description: "The chat's activated skills after the turn." })
  activatedSkills: ActivatedSkillModel[];

  @Field(() => String, { nullable: true, description: 'The first invoked skill; all of them are in `invokedSkills`.' })
  invokedSkill: string | null;

  @Field(() => [String], { description: 'The skills the message invoked explicitly, in order.' })
  invokedSkills: string[];

  @Field(() => MessageCommandModel, { nullable: true, description: 'The command the message ran, with the prompt it expanded to.' })
  command: MessageCommandModel | null;
}

@ObjectType('ToolRun', { description: 'A skill tool run through the API against a chat, stored like a model-made call.' })
export class ToolRunModel {
  @Field(() => ToolCardModel)
  toolCard: ToolCardModel;

  @Field(() => [ActivatedSkillModel])
  activatedSkills: ActivatedSkillModel[];
}
