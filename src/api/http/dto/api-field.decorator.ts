import { Field, Float, ID, Int, type ReturnTypeFunc, type ReturnTypeFuncValue } from '@nestjs/graphql';
import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';

export interface ApiFieldOptions {
  /** Both doors' description, unless a door words it its own way (`openapi.description`, `graphql.description`). */
  description?: string;
  /** The value may be null (`T | null`): `nullable` in OpenAPI, a nullable GraphQL field. */
  nullable?: boolean;
  /** The value may be absent (`name?: T`): not `required` in OpenAPI, a nullable GraphQL field. */
  optional?: boolean;
  /**
   * OpenAPI's own keywords (format, enum, bounds, example…), as `@ApiProperty` takes them; `type` when GraphQL's does
   * not say it (an `enum` says it).
   */
  openapi?: ApiPropertyOptions;
  /** GraphQL's own description. */
  graphql?: { description?: string };
}

/**
 * A property decorator that accepts only a property whose type admits null exactly when the
 * options say `nullable`, and undefined exactly when they say `optional`: a shape cannot tell one
 * door "never null" while the class says otherwise.
 */
export type ApiFieldDecorator<O extends ApiFieldOptions> = <T extends object, K extends keyof T & string>(
  target: T,
  key: K & Admits<T[K], O>,
) => void;

type Admits<V, O extends ApiFieldOptions> =
  Flag<O['nullable']> extends (null extends V ? true : false)
    ? Flag<O['optional']> extends (undefined extends V ? true : false)
      ? unknown
      : never
    : never;
type Flag<B> = B extends true ? true : false;

/**
 * One property of a shape both doors publish: `@ApiProperty` for the OpenAPI document and `@Field`
 * for the GraphQL schema, from one call, so a field cannot be added to one door and forgotten in
 * the other. The GraphQL type comes first, as with `@Field` (absent: the design type). OpenAPI's
 * type is `openapi.type` when given, else the GraphQL type's plain meaning (`Int` an integer,
 * `Float` a number, `ID` a string, a class its schema, a list an array of these), else the design
 * type; any other GraphQL type (a custom scalar, an enum) needs `openapi.type` or `openapi.enum`.
 */
export function ApiField<const O extends ApiFieldOptions = object>(options?: O): ApiFieldDecorator<O>;
export function ApiField<const O extends ApiFieldOptions = object>(
  type: ReturnTypeFunc,
  options?: O,
): ApiFieldDecorator<O>;
export function ApiField(
  typeOrOptions?: ReturnTypeFunc | ApiFieldOptions,
  maybeOptions?: ApiFieldOptions,
): ApiFieldDecorator<ApiFieldOptions> {
  const type = typeof typeOrOptions === 'function' ? typeOrOptions : undefined;
  const options = (typeof typeOrOptions === 'function' ? maybeOptions : typeOrOptions) ?? {};
  const openapi = openApiOptions(type, options);
  const graphql = {
    nullable: options.nullable || options.optional || undefined,
    description: options.graphql?.description ?? options.description,
  };
  const property = ApiProperty(openapi);
  const field = type === undefined ? Field(graphql) : Field(type, graphql);
  return (target, key) => {
    property(target, key);
    field(target, key);
  };
}

/** `@ApiProperty`'s options: OpenAPI's own keywords in their order, then what both doors say. */
function openApiOptions(
  type: ReturnTypeFunc | undefined,
  { openapi = {}, nullable, optional, description }: ApiFieldOptions,
): ApiPropertyOptions {
  return {
    // Resolved when the document is built, as `@ApiProperty({ type: () => X })` is (Swagger knows such a function by
    // its name, `type`).
    ...(type !== undefined && openapi.type === undefined && openapi.enum === undefined
      ? { type: () => openApiTypeOf(type()) }
      : {}),
    ...openapi,
    ...(nullable ? { nullable: true } : {}),
    ...(description !== undefined && openapi.description === undefined ? { description } : {}),
    ...(optional ? { required: false } : {}),
  } as ApiPropertyOptions;
}

type OpenApiType = ApiPropertyOptions['type'];

function openApiTypeOf(type: ReturnTypeFuncValue): OpenApiType {
  if (Array.isArray(type)) return [openApiTypeOf(type[0])] as OpenApiType;
  if (type === Int) return 'integer';
  if (type === Float) return Number;
  if (type === ID) return String;
  if (typeof type === 'function') return type;
  throw new Error(`ApiField: GraphQL's ${String(type)} has no plain OpenAPI type; give openapi.type or openapi.enum.`);
}
