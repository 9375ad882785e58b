import { Field, ObjectType } from '@nestjs/graphql';

/** GraphQL's own: REST answers the file itself (GET /v1/skills/{name}/resources/{path}), not this wrapper. */
@ObjectType('SkillResource', {
  description: 'One file of a skill, as text (the twin of GET /v1/skills/{name}/resources/{path}).',
})
export class SkillResourceModel {
  @Field()
  name: string;

  @Field()
  path: string;

  @Field()
  content: string;

  @Field({
    description: 'True when the file was cut at app.skills.max_resource_bytes (the content then ends with a notice).',
  })
  truncated: boolean;
}
