import { isRecord } from '@persona-browser/service-kit';
import type { Json, RestCall } from './rest';
import { fromResult } from './results';
import type { ToolDef } from './tool';
import { stringArg } from './tool';

const PLUGIN_PATH = /^\/api\/v1\/\{page_id\}\/plugin\/(.+)$/;

/** `social/open-account` → `plugin_social_open_account` (names tools allow). */
export const pluginToolName = (routePath: string): string =>
  `plugin_${routePath.replace(/[^A-Za-z0-9]+/g, '_')}`.slice(0, 64);

/** The JSON schema of an operation's arguments: its JSON body, else its query parameters. */
function argumentsOf(op: Json): { properties: Json; required: string[] } {
  const content =
    isRecord(op.requestBody) && isRecord(op.requestBody.content) ? op.requestBody.content : {};
  const json = content['application/json'];
  const schema = isRecord(json) && isRecord(json.schema) ? json.schema : null;
  if (schema && isRecord(schema.properties)) {
    const required = Array.isArray(schema.required) ? schema.required.map(String) : [];
    return { properties: { ...schema.properties }, required };
  }
  const properties: Json = {};
  const required: string[] = [];
  for (const p of Array.isArray(op.parameters) ? op.parameters : []) {
    if (!isRecord(p) || p.in !== 'query' || typeof p.name !== 'string') continue;
    properties[p.name] = isRecord(p.schema) ? { ...p.schema } : {};
    if (p.required === true) required.push(p.name);
  }
  return { properties, required };
}

/**
 * One tool per installed plugin, from the OpenAPI document the persona serves: its parameters
 * are the tool's input (with `page_id`), its summary and description the tool's. The call goes
 * to the plugin's route with the arguments as its JSON body (a GET plugin merges body and
 * query), carrying the session's lease on the page.
 */
export function pluginTools(doc: unknown): ToolDef[] {
  const paths = isRecord(doc) && isRecord(doc.paths) ? doc.paths : {};
  const tools: ToolDef[] = [];
  for (const [path, item] of Object.entries(paths)) {
    const m = PLUGIN_PATH.exec(path);
    if (!m || !isRecord(item)) continue;
    const routePath = m[1] ?? '';
    const method = isRecord(item.post) ? 'POST' : isRecord(item.get) ? 'GET' : null;
    const op = method === 'POST' ? item.post : item.get;
    if (!method || !isRecord(op)) continue;
    const { properties, required } = argumentsOf(op);
    const summary = typeof op.summary === 'string' ? op.summary : `the ${routePath} plugin`;
    const details = typeof op.description === 'string' ? `\n\n${op.description}` : '';
    tools.push({
      name: pluginToolName(routePath),
      description: `Plugin ${routePath}: ${summary}${details}`,
      inputSchema: {
        type: 'object',
        properties: {
          page_id: { type: 'string', description: 'the page the plugin works on' },
          ...properties,
        },
        required: ['page_id', ...required.filter((r) => r !== 'page_id')],
      },
      run: async (args, ctx) => {
        const pageId = stringArg(args, 'page_id');
        const body: Json = { ...args };
        delete body.page_id;
        // By path, not through the typed client: the route was read from the document the
        // persona serves now, which may hold plugins the client was not generated with.
        const call: RestCall = {
          method,
          path: `/api/v1/${encodeURIComponent(pageId)}/plugin/${routePath}`,
          lease: ctx.leases.token(ctx.target, pageId),
          timeoutMs: 600_000,
        };
        // A GET has no body: its arguments go as its query, as its parameters are documented.
        const sent = method === 'GET' ? { ...call, query: body } : { ...call, body };
        return fromResult(await ctx.target.call(sent));
      },
    });
  }
  return tools.sort((a, b) => a.name.localeCompare(b.name));
}
