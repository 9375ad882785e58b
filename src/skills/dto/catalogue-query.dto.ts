import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { CATALOGUE_FORMATS, type CatalogueFormat } from '../../config/app-config.js';
import { RESOURCE_TYPES, type ResourceType } from '../skill-resources.service.js';

export class CatalogueQueryDto {
  @ApiPropertyOptional({ enum: CATALOGUE_FORMATS, description: 'Default: `app.skills.catalogue_format`.' })
  @IsOptional()
  @IsIn(CATALOGUE_FORMATS, { message: `format must be one of ${CATALOGUE_FORMATS.join(', ')}` })
  format?: CatalogueFormat;
}

export class ResourceListQueryDto {
  @ApiPropertyOptional({ enum: RESOURCE_TYPES, description: 'Only files under `scripts/`, `references/` or `assets/`, or `other` for everything else.' })
  @IsOptional()
  @IsIn(RESOURCE_TYPES, { message: `type must be one of ${RESOURCE_TYPES.join(', ')}` })
  type?: ResourceType;
}
