import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { CATALOGUE_FORMATS, type CatalogueFormat } from '../../config/app-config.js';

export class CatalogueQueryDto {
  @ApiPropertyOptional({ enum: CATALOGUE_FORMATS, description: 'Default: `app.skills.catalogue_format`.' })
  @IsOptional()
  @IsIn(CATALOGUE_FORMATS, { message: `format must be one of ${CATALOGUE_FORMATS.join(', ')}` })
  format?: CatalogueFormat;
}
