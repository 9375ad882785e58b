import { Controller, Get, Inject } from '@nestjs/common';
import { RequireScope } from './decorators/auth.decorators.js';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { configuredModels } from '../../domain/chats/chat-models.js';
import { ModelListDto } from './dto/model-list.dto.js';

/** The models a turn may name (`model` of `POST /v1/chats/:id/messages`): what a client's model picker offers. */
@Controller('v1')
@RequireScope('chats')
@ApiTags('chats')
export class ModelsController {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  @Get('models')
  @ApiOperation({
    summary: 'The configured models',
    description:
      'Each `[app.models.NAME]` by name, its provider and model, and whether the skill tools are offered to it; ' +
      '`defaultModel` is the one a turn without `model` uses (null: a turn must name one). Base URLs and keys ' +
      'are not shown.',
  })
  @ApiOkResponse({ type: ModelListDto })
  list(): ModelListDto {
    return configuredModels(this.config.app);
  }
}
