import type Joi from 'joi';
import type joiToJson from 'joi-to-json';
import { isRecord } from '@persona-browser/service-kit';
import type { RouteInfo } from './route';
import { authError, errorEnvelope } from './schemas';

type Json = Record<string, unknown>;

/**
 * Unknown fields are accepted and ignored (scroll-page, docs/api.md), so no schema may claim that
 * extra properties are refused.
 */
function openFields(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(openFields);
  if (!node || typeof node !== 'object') return node;
  const out: Json = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'additionalProperties' && v === false) continue;
    out[k] = openFields(v);
  }
  return out;
}

/**
 * joi-to-json, loaded when the document is first asked for: with the whole of lodash behind it,
 * it held about 2 MB of an idle worker's heap that most workers never use.
 */
let parse: typeof joiToJson | null = null;

function toSchema(schema: Joi.Schema): Json {
  if (!parse) throw new Error('toSchema before buildOpenApi loaded joi-to-json');
  const out = openFields(parse(schema, 'open-api'));
  if (!isRecord(out)) throw new Error('joi-to-json made no schema object');
  return out;
}

/** Express `:name` segments become OpenAPI `{name}`. */
export const openApiPath = (expressPath: string): string => expressPath.replace(/:(\w+)/g, '{$1}');

const pathOf = (route: RouteInfo<unknown, unknown>): string =>
  route.docPath ?? openApiPath(route.path);

function parameters(route: RouteInfo<unknown, unknown>): Json[] {
  const out: Json[] = [];
  for (const m of pathOf(route).matchAll(/\{(\w+)\}/g)) {
    out.push({ name: m[1], in: 'path', required: true, schema: { type: 'string' } });
  }
  if (route.page === 'leased') {
    out.push({
      name: 'X-Lease',
      in: 'header',
      required: false,
      description: 'lease token, required while the page is leased',
      schema: { type: 'string' },
    });
  }
  if (route.query) {
    const q = toSchema(route.query);
    const required: unknown[] = Array.isArray(q.required) ? q.required : [];
    for (const [name, schema] of Object.entries(isRecord(q.properties) ? q.properties : {})) {
      out.push({ name, in: 'query', required: required.includes(name), schema });
    }
  }
  return out;
}

function responses(route: RouteInfo<unknown, unknown>): Json {
  const json = (schema: Json, description: string): Json => ({
    description,
    content: { 'application/json': { schema } },
  });
  const err = { $ref: '#/components/schemas/ErrorResponse' };
  // A raw route without a JSON response schema writes bytes (media downloads).
  const binary = route.raw && !route.response;
  const rawType = route.rawType ?? 'application/octet-stream';
  const out: Json = {
    200: binary
      ? {
          description: route.rawType ? route.rawType : 'File bytes',
          content: { [rawType]: { schema: { type: 'string', format: 'binary' } } },
        }
      : json(route.response ? toSchema(route.response) : { type: 'object' }, 'Success'),
    400: json(err, 'Bad request'),
  };
  if (route.auth) {
    out[401] = json({ $ref: '#/components/schemas/AuthError' }, 'Missing or wrong bearer token');
  }
  if (route.page) {
    out[404] = json(err, 'Page not found');
    out[409] = json(err, 'Page busy past the wait timeout');
    out[423] = json(err, 'Page leased by another client');
  }
  out[500] = json(err, 'Navigator not initialized, or server not configured');
  return out;
}

/** The OpenAPI 3 document, built from the same joi schemas that validate the requests. */
export async function buildOpenApi(
  routes: RouteInfo<unknown, unknown>[],
  version: string,
): Promise<Json> {
  parse ??= (await import('joi-to-json')).default;
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      const op: Json = {
        operationId: `${method}-${route.tag.toLowerCase()}-${route.name}`,
        tags: [route.tag],
        summary: route.summary,
        parameters: parameters(route),
        responses: responses(route),
      };
      if (route.description) op.description = route.description;
      if (route.auth) op.security = [{ bearer: [] }];
      // A GET's parameters are documented as its query (tools do not send a GET body).
      if (route.body && method !== 'get') {
        op.requestBody = {
          required: false,
          content: { 'application/json': { schema: toSchema(route.body) } },
        };
      }
      (paths[pathOf(route)] ??= {})[method] = op;
    }
  }
  return {
    openapi: '3.0.3',
    info: {
      title: 'persona-browser',
      version,
      description: 'A persistent, visible browser per persona, driven over REST.',
    },
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: { ErrorResponse: toSchema(errorEnvelope), AuthError: toSchema(authError) },
    },
  };
}
