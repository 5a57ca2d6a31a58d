export { McpHost, DEFAULT_IDLE_MS } from './host';
export type { McpHostOptions } from './host';
export { SessionLeases, SESSION_LEASE_TTL_S } from './leases';
export { pluginTools, pluginToolName } from './plugin-tools';
export { RestTarget, Unreachable } from './rest';
export type { Json, RestCall, RestReply } from './rest';
export { fromReply, toolError, htmlToText } from './results';
export { CORE_TOOLS, ArgumentError, stringArg } from './tools';
export type { ToolContext, ToolDef } from './tools';
