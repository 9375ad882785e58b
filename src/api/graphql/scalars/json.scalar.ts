import { GraphQLScalarType, Kind, type ValueNode } from 'graphql';
import { beyondLimit, jsonValueLimitExceeded } from '../../http/pipes/json-body.js';

/**
 * Any JSON value, for the fields whose REST twin is free-form JSON (tool arguments, frontmatter,
 * tool-card summaries, tool input schemas, the data of chat events). Values go out as they are,
 * so a client gets exactly what the REST body (or the SSE stream) carries. Values coming in keep
 * to a JSON body's limits (json-body.ts): a literal in the query, or variables sent in a GET's
 * URL, never passed through the body parser that checks them.
 */
export const GraphQLJSON = new GraphQLScalarType({
  name: 'JSON',
  description: 'Any JSON value: object, array, string, number, boolean or null.',
  serialize: (value) => value,
  parseValue: (value) => withinJsonLimits(value),
  parseLiteral: (ast, variables) => withinJsonLimits(literalValue(ast, variables ?? undefined)),
});

function withinJsonLimits(value: unknown): unknown {
  const exceeded = jsonValueLimitExceeded(value);
  if (exceeded !== undefined) throw new TypeError(beyondLimit(exceeded, 'A JSON value'));
  return value;
}

function literalValue(ast: ValueNode, variables: Record<string, unknown> | undefined): unknown {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return ast.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(ast.value);
    case Kind.NULL:
      return null;
    case Kind.LIST:
      return ast.values.map((value) => literalValue(value, variables));
    case Kind.OBJECT:
      // As REST's JSON parser does: a `__proto__` key would become an object's prototype on the way in.
      if (ast.fields.some((field) => field.name.value === '__proto__'))
        throw new TypeError('A JSON object may not use the key `__proto__`.');
      return Object.fromEntries(ast.fields.map((field) => [field.name.value, literalValue(field.value, variables)]));
    case Kind.VARIABLE:
      return variables?.[ast.name.value];
    case Kind.ENUM:
      return ast.value;
  }
}
