import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/** Just enough of an OpenAPI 3.1 document for the tests to walk it. */
export interface Schema {
  $ref?: string;
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  enum?: unknown[];
  [keyword: string]: unknown;
}

export interface MediaType {
  schema?: Schema;
}

export interface Response {
  description: string;
  content?: Record<string, MediaType>;
  headers?: Record<string, unknown>;
}

export interface Parameter {
  name: string;
  in: string;
}

export interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: unknown;
  responses: Record<string, Response>;
  security?: Record<string, string[]>[];
}

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; securitySchemes: Record<string, Record<string, unknown>> };
}

export interface DocumentedOperation {
  /** `GET /v1/chats/{id}` */
  key: string;
  method: string;
  path: string;
  operation: Operation;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

export function operationsOf(document: OpenApiDocument): DocumentedOperation[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({
        key: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        operation,
      })),
  );
}

/** `METHOD /path/{}` for a Fastify route (`:name`, `*`) or a documented one (`{name}`), so the two compare. */
export function routeShape(method: string, path: string): string {
  return `${method.toUpperCase()} ${path.replace(/:[A-Za-z0-9_]+|\*|\{[^}]+\}/g, '{}')}`;
}

/** The path with its parameters filled in: ids get a UUID no row has, anything else `value`. */
export function samplePath(path: string, value = 'x'): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) =>
    name === 'id' ? '00000000-0000-4000-8000-00000000abcd' : value,
  );
}

export const ERROR_BODY_REF = '#/components/schemas/ErrorBodyDto';

/** The codes an error response says it answers (its narrowing of the error body's `code`). */
export function documentedCodes(operation: Operation, status: number | string): string[] {
  const schema = operation.responses[String(status)]?.content?.['application/json']?.schema;
  return (schema?.allOf?.[1]?.properties?.code?.enum as string[] | undefined) ?? [];
}

export function hasInput(operation: Operation): { body: boolean; query: boolean } {
  return {
    body: operation.requestBody !== undefined,
    query: (operation.parameters ?? []).some((p) => p.in === 'query'),
  };
}

/**
 * Checks values against the document's schemas with a JSON Schema 2020-12 validator (what
 * OpenAPI 3.1 schemas are). Named object schemas are closed (`additionalProperties: false` unless
 * they say otherwise), so a field the server sends but the document does not name is an error too.
 */
export function schemaChecker(document: OpenApiDocument): (schema: Schema, value: unknown) => string[] {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  const schemas = Object.fromEntries(
    Object.entries(structuredClone(document.components.schemas)).map(([name, schema]) => [
      name,
      schema.properties && schema.additionalProperties === undefined
        ? { ...schema, additionalProperties: false }
        : schema,
    ]),
  );
  let count = 0;
  return (schema, value) => {
    // The schema's `#/components/…` references resolve against this root, which carries the components.
    const validate = ajv.compile({ $id: `urn:skillhost:check:${count++}`, allOf: [schema], components: { schemas } });
    return validate(value)
      ? []
      : (validate.errors ?? []).map(
          (error) => `${error.instancePath || '/'} ${error.message ?? ''} ${JSON.stringify(error.params)}`,
        );
  };
}
