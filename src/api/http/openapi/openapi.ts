import { STATUS_CODES } from 'node:http';
import type { INestApplication } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import {
  DocumentBuilder,
  type OpenAPIObject,
  type OperationObject,
  type ParameterObject,
  type ReferenceObject,
  SwaggerModule,
} from '@nestjs/swagger';
import { ErrorBodyDto } from '../dto/error-body.dto.js';
import { packageVersion } from '../../../config/package-version.js';
import { errorResponses } from './api-errors.decorator.js';
import { collectRouteFacts, errorCodesOf, operationIdOf, type RouteFacts } from './route-rules.js';
import { registerSwaggerUi } from './swagger-ui.js';

/** Where the document and its browsable UI are served; both need no key. */
export const OPENAPI_JSON_PATH = '/openapi.json';
export const OPENAPI_UI_PATH = '/docs';

export const BEARER_SCHEME = 'bearer';
export const API_KEY_SCHEME = 'api-key';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/**
 * Serves the OpenAPI document at `/openapi.json` (SwaggerModule's route) and Swagger UI at `/docs`.
 * Both are registered on Fastify itself, outside Nest's guards, so they answer without a key. The
 * document is built on its first request, not at start-up. Call before `app.init()`.
 */
export function setupOpenApi(app: NestFastifyApplication): void {
  SwaggerModule.setup(OPENAPI_UI_PATH, app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: OPENAPI_JSON_PATH,
    raw: ['json'],
    ui: false,
  });
  registerSwaggerUi(app.getHttpAdapter().getInstance(), OPENAPI_UI_PATH, OPENAPI_JSON_PATH, 'Skillhost API');
}

/** The OpenAPI 3.1 document of every controller route, with the error codes and security each answers by rule. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const document = SwaggerModule.createDocument(app, documentConfig(), {
    operationIdFactory: operationIdOf,
    extraModels: [ErrorBodyDto],
  });
  applyRouteFacts(document, collectRouteFacts(app));
  return document;
}

function documentConfig(): Omit<OpenAPIObject, 'paths'> {
  return new DocumentBuilder()
    .setTitle('Skillhost')
    .setDescription(
      'A team-hosted server for Agent Skills: discovery, validation, catalogue, activation and resources, and ' +
        'chats that use them.\n\n' +
        'Every error is `{code, message, details?}` with one HTTP status per code; each operation lists the ' +
        'codes it can answer.\n\n' +
        'Keys are required when `app.auth.mode` is `api_key` (or `auto` on a non-loopback address). With auth ' +
        'off, a request without a key acts as the admin `local`; a key that is sent is still checked (a valid ' +
        'one acts as its user, any other answers 401).',
    )
    .setVersion(packageVersion())
    .setOpenAPIVersion('3.1.0')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'skh_…',
        description: '`Authorization: Bearer skh_…` (an API key made with `POST /v1/me/keys` or the CLI).',
      },
      BEARER_SCHEME,
    )
    .addApiKey(
      { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'The same API key in `x-api-key: skh_…`.' },
      API_KEY_SCHEME,
    )
    .addTag('health', 'Liveness; no key needed.')
    .addTag('skills', 'Loaded skills, their instructions and files, and the catalogue as a model gets it.')
    .addTag('chats', "The caller's chats and their turns.")
    .addTag('tools', 'The skill tools run against a chat, for teams with their own model loop.')
    .addTag('me', "The caller's account and API keys.")
    .addTag('admin', "For operators: users, anyone's keys, every chat, the skills scan.")
    .build();
}

/** Adds what every route of its kind answers (security, error codes by rule) to each operation. */
function applyRouteFacts(document: OpenAPIObject, facts: ReadonlyMap<string, RouteFacts>): void {
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (operation === undefined) continue;
      const route = facts.get(operation.operationId ?? '');
      if (route === undefined)
        throw new Error(
          `OpenAPI: ${method.toUpperCase()} ${path} (${operation.operationId}) matches no controller method.`,
        );
      nameWildcardParameter(path, operation);
      // Either header will do: two requirement objects are alternatives.
      if (!route.isPublic) operation.security = [{ [BEARER_SCHEME]: [] }, { [API_KEY_SCHEME]: [] }];
      const input = {
        body: operation.requestBody !== undefined,
        query: parametersOf(operation).some((p) => p.in === 'query'),
      };
      Object.assign(operation.responses, errorResponses(errorCodesOf(route, input)));
      describeBareResponses(operation);
    }
  }
}

/** Fastify names a wildcard's parameter `*`, the path template names it (`{path}`): the template's name wins. */
function nameWildcardParameter(path: string, operation: OperationObject): void {
  const parameters = parametersOf(operation).filter((p) => p.in === 'path');
  const wildcard = parameters.find((p) => p.name === '*');
  if (wildcard === undefined) return;
  const named = new Set(parameters.map((p) => p.name));
  const templateName = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]).find((name) => !named.has(name));
  if (templateName === undefined)
    throw new Error(`OpenAPI: ${path} has a wildcard parameter but no unnamed segment for it.`);
  wildcard.name = templateName;
}

/** A response must have a description; one that names no more than its status gets the status' reason phrase. */
function describeBareResponses(operation: OperationObject): void {
  for (const [status, response] of Object.entries(operation.responses)) {
    if (response !== undefined && 'description' in response && response.description === '')
      response.description = STATUS_CODES[status] ?? status;
  }
}

function parametersOf(operation: OperationObject): ParameterObject[] {
  return (operation.parameters ?? []).filter((p: ParameterObject | ReferenceObject): p is ParameterObject => 'in' in p);
}
