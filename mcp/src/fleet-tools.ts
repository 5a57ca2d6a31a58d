import { pluginTools } from './plugin-tools';
import type { RestTarget } from './rest';
import { fromResult } from './results';
import type { ToolContext, ToolDef } from './tool';
import { ArgumentError, stringArg } from './tool';
import { CORE_TOOLS } from './tools';

/** How long the fleet's plugin tools are kept before a persona is asked again (ms). */
const PLUGIN_LIST_MS = 5 * 60_000;

/** What the fleet's MCP server knows of the personas. */
export interface FleetPersonas {
  /**
   * The persona's front door; throws ArgumentError for an unknown name. `origin` is where the
   * MCP client reached the fleet: the links a persona makes for a person (ask_person's
   * `live_url`) name that host, at the persona's own port.
   */
  target(name: string, origin: ToolContext['origin']): RestTarget;
  /** A persona to read the plugin set from: an awake one if any (else one its call wakes). */
  sample(): string | null;
}

/** A persona's tool as the fleet offers it: the same, with `persona` first among its arguments. */
function forPersona(tool: ToolDef, personas: FleetPersonas): ToolDef {
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: {
      type: 'object',
      properties: {
        persona: { type: 'string', description: 'the persona, as list_personas names it' },
        ...tool.inputSchema.properties,
      },
      required: ['persona', ...(tool.inputSchema.required ?? [])],
    },
    run: (args, ctx) => {
      const target = personas.target(stringArg(args, 'persona'), ctx.origin);
      const rest = { ...args };
      delete rest.persona;
      return tool.run(rest, { ...ctx, target });
    },
  };
}

/**
 * The fleet's tools: `list_personas`, then every persona tool with a `persona` argument, each
 * call going through that persona's front door (which wakes it). Plugin tools are read from a
 * persona's OpenAPI document (all personas run the same code) and kept for a few minutes.
 * `ctx.target` of the fleet's own tools is the waker's API.
 */
export function fleetCatalog(personas: FleetPersonas): () => Promise<ToolDef[]> {
  let plugins: { at: number; tools: ToolDef[] } | null = null;
  const listPersonas: ToolDef = {
    name: 'list_personas',
    description:
      'The personas of the fleet: name, mode (always-on or sleepy), state (a sleeping one wakes ' +
      'on its first call), node. Every other tool takes a persona.',
    inputSchema: { type: 'object', properties: {} },
    // The waker's own API (`ctx.target` here), which the persona client does not describe.
    run: async (_args, ctx) =>
      fromResult(await ctx.target.call({ method: 'GET', path: '/api/personas' })),
  };
  const readPlugins = async (): Promise<ToolDef[]> => {
    if (plugins && Date.now() - plugins.at < PLUGIN_LIST_MS) return plugins.tools;
    const name = personas.sample();
    if (name === null) return [];
    const doc = await personas
      .target(name, { host: null, proto: null })
      .call({ method: 'GET', path: '/openapi.json' });
    if (!doc.ok) throw new ArgumentError(`persona ${name} gave no OpenAPI document`);
    plugins = { at: Date.now(), tools: pluginTools(doc.data) };
    return plugins.tools;
  };
  return async () => [
    listPersonas,
    ...[...CORE_TOOLS, ...(await readPlugins())].map((t) => forPersona(t, personas)),
  ];
}
