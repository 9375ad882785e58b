import { GraphQLError, GraphQLScalarType } from 'graphql';

/**
 * An instant as an ISO 8601 string at UTC, as REST bodies show it. Serialises `Date`s (entities)
 * and ISO strings (what presenters already formatted, such as a scan's `scannedAt`) alike.
 */
export const GraphQLDateTime = new GraphQLScalarType<Date, string>({
  name: 'DateTime',
  description: 'An instant as an ISO 8601 string at UTC, such as 2026-01-31T09:54:33.000Z.',
  serialize(value) {
    const date = value instanceof Date ? value : typeof value === 'string' ? new Date(value) : undefined;
    if (date === undefined || Number.isNaN(date.getTime()))
      throw new GraphQLError(`DateTime cannot represent ${JSON.stringify(value)}.`);
    return date.toISOString();
  },
  parseValue(value) {
    return parseInstant(value);
  },
  parseLiteral(ast) {
    return parseInstant('value' in ast ? ast.value : undefined);
  },
});

function parseInstant(value: unknown): Date {
  const date = typeof value === 'string' ? new Date(value) : undefined;
  if (date === undefined || Number.isNaN(date.getTime()))
    throw new GraphQLError(`DateTime expects an ISO 8601 string; got ${JSON.stringify(value)}.`);
  return date;
}
