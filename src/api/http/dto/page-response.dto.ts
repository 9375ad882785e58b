import { ApiProperty } from '@nestjs/swagger';

/** The paging fields of every `{items, total, limit, offset}` answer; subclasses declare `items`. */
export abstract class PageDto {
  @ApiProperty({ type: 'integer', minimum: 0, description: 'All items, not just this page.' })
  total: number;

  @ApiProperty({ type: 'integer', minimum: 1, maximum: 200 })
  limit: number;

  @ApiProperty({ type: 'integer', minimum: 0 })
  offset: number;
}
