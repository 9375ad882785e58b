import { Field, ObjectType } from '@nestjs/graphql';
import { GraphQLJSON } from '../scalars/json.scalar.js';

@ObjectType('ChatEvent', {
  description: 'One event of a turn, exactly as the SSE stream of POST /v1/chats/{id}/messages sends it.',
})
export class ChatEventModel {
  @Field({
    description:
      '`tool-call`, `tool-result`, `text-delta`, then `done` (data: the turn, as `sendMessage` answers it) or ' +
      '`error` (data: `{code, message, details?}`).',
  })
  event: string;

  @Field(() => GraphQLJSON)
  data: unknown;
}
