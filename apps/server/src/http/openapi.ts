import {
  ERRORS,
  LIVE_TARGETS,
  LiveErrorResponse,
  operations,
  PublicCacheRequest,
  PublicCacheResponse,
  PublicErrorResponse,
  PublicPurgeResponse,
  TokenInfoResponse,
  type ErrorCode,
} from '@ukiyo/contract';
import type { Hono } from 'hono';
import { z } from 'zod';
import type { Config } from '../config.ts';
import { API_ROUTES, bodySchema, INTEGER_PARAMS, PageQuery, successStatus, type ApiRoute } from './api-v1.ts';

/** A zod schema as JSON Schema 2020-12 (OpenAPI 3.1's dialect); what a caller sends or gets. */
function schemaOf(value: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(value, { io, unrepresentable: 'any' });
  return schema;
}

const json = (schema: Record<string, unknown>) => ({ 'application/json': { schema } });

/** The spec's error body, every code of the catalogue. */
const ErrorBodySchema = z.object({
  error: z.enum(Object.keys(ERRORS) as [ErrorCode, ...ErrorCode[]]),
  /** Field path to message references (`validation.maxLength|n=128`). */
  invalids: z.record(z.string(), z.array(z.string())).optional(),
  params: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
});

/** The error body, once in the document's components. */
const ERROR = { $ref: '#/components/schemas/Error' };

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid input (`invalids` names the fields) or a refusal of the operation',
  401: 'No valid API token, or its creator can no longer act in the organization',
  404: 'Not found in the token’s organization, or the token lacks the permission',
  409: 'In conflict with the current state (or the Idempotency-Key’s call is still running)',
  412: 'If-Match names another version: read it again',
  422: 'The Idempotency-Key was used for another request',
  429: 'Too many calls with this token, or too many bad tokens from this address (see Retry-After)',
  500: 'Internal error',
  503: 'The image cache cannot be reached',
};

const RATE_HEADERS = {
  'RateLimit-Limit': { description: 'Calls per minute of the token', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Calls left this minute', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the budget is full again', schema: { type: 'integer' } },
};

/** The schema of an operation's input field, whether the input has a default or not. */
function inputShape(route: ApiRoute): Record<string, z.ZodType> {
  const input = operations[route.operation].input;
  const object = (input instanceof z.ZodDefault ? input.unwrap() : input) as z.ZodObject;
  return object.shape as Record<string, z.ZodType>;
}

/** The schema of a successful answer: as `present` in api-v1.ts makes it. */
function successSchema(route: ApiRoute): Record<string, unknown> | undefined {
  if (successStatus(route) === 204) return undefined;
  const output = operations[route.operation].output as z.ZodObject;
  if (route.resource) return schemaOf(output.shape[route.resource] as z.ZodType, 'output');
  if (route.list) return schemaOf(output.extend({ nextCursor: z.string().nullable() }), 'output');
  return schemaOf(output, 'output');
}

function errorStatuses(route: ApiRoute, guarded: boolean): number[] {
  const statuses = [400, 401, 404, 409, 429, 500];
  if (guarded) statuses.push(412);
  if (route.creates) statuses.push(422);
  if (route.operation.startsWith('cache.')) statuses.push(503);
  return statuses.sort();
}

function v1Operation(route: ApiRoute, guarded: boolean) {
  const shape = inputShape(route);
  const parameters: object[] = [...route.path.matchAll(/\{(\w+)\}/g)].map(([, name]) => ({
    name,
    in: 'path',
    required: true,
    schema: INTEGER_PARAMS.has(name!) ? { type: 'integer', minimum: 1 } : { type: 'string' },
  }));
  for (const name of route.query ?? []) {
    parameters.push({ name, in: 'query', schema: schemaOf(shape[name]!, 'input') });
  }
  if (route.list) {
    for (const [name, schema] of Object.entries(PageQuery.shape)) {
      parameters.push({ name, in: 'query', schema: schemaOf(schema, 'input') });
    }
  }
  if (route.creates) {
    parameters.push({
      name: 'Idempotency-Key',
      in: 'header',
      description: 'Retrying with the same key and request answers the first call’s answer again (for a day)',
      schema: { type: 'string', pattern: '^[\\x21-\\x7e]{1,255}$' },
    });
  }
  if (guarded) {
    parameters.push({
      name: 'If-Match',
      in: 'header',
      description: 'The ETag read last: the call is refused (412) if the resource changed since',
      schema: { type: 'string' },
    });
  }
  const success = successSchema(route);
  const body = bodySchema(route);
  const responses: Record<string, object> = {
    [successStatus(route)]: {
      description: 'Done',
      headers: {
        ...RATE_HEADERS,
        ...(route.resource
          ? { ETag: { description: 'The version of the resource', schema: { type: 'string' } } }
          : {}),
      },
      ...(success ? { content: json(success) } : {}),
    },
  };
  if (route.method === 'GET' && route.resource) {
    responses['304'] = { description: 'Unchanged since the ETag named by If-None-Match' };
  }
  for (const status of errorStatuses(route, guarded)) {
    responses[status] = {
      description: STATUS_TEXT[status],
      content: json(ERROR),
    };
  }
  return {
    operationId: route.operation,
    summary: route.summary,
    tags: [route.path.split('/')[1]],
    security: [{ bearer: [] }],
    parameters,
    ...(body ? { requestBody: { required: true, content: json(schemaOf(body, 'input')) } } : {}),
    responses,
  };
}

/** /api/v1, from API_ROUTES: what each call takes and answers, from the contract's schemas. */
function v1Paths(): Record<string, Record<string, object>> {
  const readable = new Set(
    API_ROUTES.filter((route) => route.method === 'GET' && route.resource).map((route) => route.path),
  );
  const paths: Record<string, Record<string, object>> = {};
  for (const route of API_ROUTES) {
    const guarded = route.method !== 'GET' && readable.has(route.path);
    (paths[`/api/v1${route.path}`] ??= {})[route.method.toLowerCase()] = v1Operation(route, guarded);
  }
  return paths;
}

/** The public API's first calls: cache lookup and delete by URL, token info. */
function publicPaths() {
  const failures = {
    '401': { description: 'No valid API token', content: json(schemaOf(PublicErrorResponse, 'output')) },
    '403': {
      description: 'The token lacks the permission',
      content: json(schemaOf(PublicErrorResponse, 'output')),
    },
    '429': { description: STATUS_TEXT[429], content: json(schemaOf(PublicErrorResponse, 'output')) },
  };
  const cacheOperation = (operationId: string, summary: string, answer: z.ZodType = PublicCacheResponse) => ({
    operationId,
    summary,
    tags: ['cache'],
    security: [{ bearer: [] }],
    requestBody: { required: true, content: json(schemaOf(PublicCacheRequest, 'input')) },
    responses: {
      '200': { description: 'Done', content: json(schemaOf(answer, 'output')) },
      '400': { description: 'No usable url', content: json(schemaOf(answer, 'output')) },
      '404': {
        description: 'The url is not one of the organization’s origins',
        content: json(schemaOf(answer, 'output')),
      },
      '503': { description: STATUS_TEXT[503], content: json(schemaOf(answer, 'output')) },
      ...failures,
    },
  });
  return {
    '/api/cache.lookup': {
      post: cacheOperation('public.cacheLookup', 'List the cached variants of an image URL'),
    },
    '/api/cache.delete': {
      post: cacheOperation('public.cacheDelete', 'Delete every cached variant of an image URL'),
    },
    '/api/cache.purge_prefix': {
      post: cacheOperation(
        'public.cachePurgePrefix',
        'Delete every cached variant of every image whose path starts with the URL’s path (`https://{host}/`: the whole origin)',
        PublicPurgeResponse,
      ),
    },
    '/api/token.info': {
      post: {
        operationId: 'public.tokenInfo',
        summary: 'The organization and permissions of the calling token',
        tags: ['tokens'],
        security: [{ bearer: [] }],
        responses: {
          '200': { description: 'The token', content: json(schemaOf(TokenInfoResponse, 'output')) },
          ...failures,
        },
      },
    },
  };
}

/**
 * The live API (live-api.md) on the live host: one endpoint, the call named by X-Sora-Target,
 * so one operation whose body and answer are those of the named target.
 */
function livePaths(config: Config) {
  const targets = Object.keys(LIVE_TARGETS);
  const each = (part: 'request' | 'response', io: 'input' | 'output') =>
    Object.values(LIVE_TARGETS).map((target) => schemaOf(target[part], io));
  const failure = (description: string) => ({
    description,
    content: json(schemaOf(LiveErrorResponse, 'output')),
  });
  return {
    '/': {
      servers: [
        {
          url: config.LIVE_PUBLIC_URL ?? `http://localhost:${config.LIVE_PORT}`,
          description: 'The live host',
        },
      ],
      post: {
        operationId: 'live.call',
        summary:
          'A live API call, named by X-Sora-Target (live streaming organizations; the live permission)',
        tags: ['live'],
        security: [{ bearer: [] }],
        parameters: [
          { name: 'X-Sora-Target', in: 'header', required: true, schema: { type: 'string', enum: targets } },
        ],
        requestBody: {
          required: true,
          description: 'The request of the named target, in the order of X-Sora-Target’s values',
          content: json({ anyOf: each('request', 'input') }),
        },
        responses: {
          '200': {
            description: 'The answer of the named target',
            content: json({ anyOf: each('response', 'output') }),
          },
          '400': failure('Unknown target, or invalid input (`invalids`)'),
          '401': failure('No valid API token'),
          '403': failure('The token lacks the live permission, or the organization is not a live one'),
          '404': failure('No such channel or destination in the organization'),
          '413': failure('The body is larger than 1 MiB'),
          '429': failure(STATUS_TEXT[429]!),
        },
      },
    },
  };
}

/**
 * The OpenAPI 3.1 document of every token-authenticated call: /api/v1, the public cache calls
 * and the live API, generated from the contract's zod schemas when the server starts.
 */
export function openApiDocument(config: Config) {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Ukiyo API',
      version: '1',
      description:
        'Token-authenticated calls: `Authorization: Bearer {encoded API token}` (issue tokens on the console’s /token/ screen). A token acts for the member who created it, in its organization, with at most that member’s permissions.',
    },
    servers: [{ url: config.PUBLIC_URL ?? '/', description: 'The console host' }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: { Error: schemaOf(ErrorBodySchema, 'output') },
    },
    paths: { ...v1Paths(), ...publicPaths(), ...livePaths(config) },
  };
}

/** `GET /api/openapi.json`. */
export function mountOpenApi(app: Hono, config: Config): void {
  const document = openApiDocument(config);
  app.get('/api/openapi.json', (c) => c.json(document));
}
