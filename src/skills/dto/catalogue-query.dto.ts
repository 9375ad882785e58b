import { IsIn, IsOptional } from 'class-validator';
import { CATALOGUE_FORMATS, type CatalogueFormat } from '../../config/app-config.js';

export class CatalogueQueryDto {
  @IsOptional()
  @IsIn(CATALOGUE_FORMATS, { message: `format must be one of ${CATALOGUE_FORMATS.join(', ')}` })
  format?: CatalogueFormat;
}
