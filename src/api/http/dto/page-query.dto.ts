import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsOptional, ValidateBy } from 'class-validator';

/** GraphQL's Int is 32-bit; REST accepts no more, so both answer the same for a huge offset. */
export const MAX_OFFSET = 2_147_483_647;

/**
 * An integer parameter from `min` to `max`, with one message per problem. From a query string only
 * decimal digits (and a leading `-`, so `-1` is "less than 0") count: `1e2`, `0x10`, `+1`, ` 1` or
 * `1.0` stay text and are refused, where Number() would take them all. GraphQL's `Int` arrives as
 * a number and is range-checked the same way.
 */
export function IntegerInRange(min: number, max: number): PropertyDecorator {
  const toNumber = Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && /^-?[0-9]{1,16}$/.test(value) ? Number(value) : value,
  );
  const inRange = ValidateBy({
    name: 'integerInRange',
    constraints: [min, max],
    validator: {
      validate: (value: unknown) => problemOf(value, min, max) === undefined,
      defaultMessage: (args) => `${args?.property} ${problemOf(args?.value, min, max)}`,
    },
  });
  return (target, key) => {
    toNumber(target, key);
    inRange(target, key);
  };
}

function problemOf(value: unknown, min: number, max: number): string | undefined {
  if (typeof value !== 'number' || !Number.isInteger(value)) return 'must be a whole number written in decimal digits';
  if (value < min) return `must not be less than ${min}`;
  if (value > max) return `must not be greater than ${max}`;
  return undefined;
}

/** `?limit=&offset=` on every paginated route: limit 1–200 (default 50), offset 0–2147483647. */
export class PageQueryDto {
  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 200, default: 50 })
  @IsOptional()
  @IntegerInRange(1, 200)
  limit?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: MAX_OFFSET, default: 0 })
  @IsOptional()
  @IntegerInRange(0, MAX_OFFSET)
  offset?: number;
}
