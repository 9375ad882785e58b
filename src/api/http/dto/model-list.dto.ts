import { ApiProperty } from '@nestjs/swagger';
import { MODEL_PROVIDERS } from '../../../config/config-schema.js';

export class ModelDto {
  @ApiProperty({ example: 'llama', description: 'The `[app.models.NAME]` section: what a turn passes as `model`.' })
  name: string;

  @ApiProperty({ enum: MODEL_PROVIDERS })
  provider: string;

  @ApiProperty({ example: 'llama3.1', description: "The provider's model id." })
  model: string;

  @ApiProperty({ description: 'Whether the skill tools are offered to it.' })
  tools: boolean;
}

export class ModelListDto {
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'The model of a turn that names none; null when a turn must name one.',
  })
  defaultModel: string | null;

  @ApiProperty({ type: () => [ModelDto], description: 'In name order.' })
  models: ModelDto[];
}
