import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './root';

/**
 * Reading the routes docs/api.md lists, to hold them against what the services serve.
 *
 * The page's convention: a route is a table row whose first cell is one code span,
 * `` `METHOD /path` `` (OpenAPI's `{name}` for path parameters). A plugin route is a row
 * `` `METHOD plugin/path` `` (no leading slash) in the plugin table: the path after
 * `/api/v1/{page_id}/plugin/`. The two rows with `{plugin-path}` describe every plugin route at
 * once and stand for no route of their own.
 */

export const API_DOC = path.join(ROOT, 'docs', 'api.md');
export const readApiDoc = (): string => fs.readFileSync(API_DOC, 'utf8');

export const PLUGIN_PREFIX = '/api/v1/{page_id}/plugin/';
const PLUGIN_PATTERN = `${PLUGIN_PREFIX}{plugin-path}`;
const ROW = /^\|\s*`(GET|POST|PUT|PATCH|DELETE|HEAD) ([^`\s]+)`\s*\|/;

export interface DocRow {
  /** `GET /api/v1/system/ping`, or `POST archive/check` for a plugin row. */
  route: string;
  /** The `## ` section the row is in. */
  section: string;
}

/** Every route row of the page, with its section. */
export function routeRows(markdown: string): DocRow[] {
  const rows: DocRow[] = [];
  let section = '';
  for (const line of markdown.split('\n')) {
    if (line.startsWith('## ')) section = line.slice(3).trim();
    const m = ROW.exec(line);
    if (m) rows.push({ route: `${m[1]} ${m[2]}`, section });
  }
  return rows;
}

/** The rows of one `## ` section, as `METHOD /path`. */
export const sectionRoutes = (markdown: string, section: string): string[] =>
  routeRows(markdown)
    .filter((r) => r.section === section)
    .map((r) => r.route);

interface OpenApiDoc {
  paths: Record<string, Record<string, unknown>>;
}

/** `METHOD /path` of every operation of an OpenAPI document. */
export function servedRoutes(doc: OpenApiDoc): string[] {
  return Object.entries(doc.paths).flatMap(([p, ops]) =>
    Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`),
  );
}

/**
 * What keeps the page and the served OpenAPI document apart, one sentence each; empty when
 * every served route is listed and every listed `/api/v1` route (and plugin) is served.
 */
export function differences(markdown: string, doc: OpenApiDoc): string[] {
  const rows = routeRows(markdown).map((r) => r.route);
  const listed = new Set(rows);
  const served = servedRoutes(doc);
  const servedSet = new Set(served);
  const problems: string[] = [];
  for (const r of served) {
    const [method, p] = r.split(' ') as [string, string];
    if (p.startsWith(PLUGIN_PREFIX)) {
      const plugin = `${method} ${p.slice(PLUGIN_PREFIX.length)}`;
      if (!listed.has(plugin))
        problems.push(`plugin route ${r} is served; docs/api.md has no row \`${plugin}\``);
      if (!listed.has(`${method} ${PLUGIN_PATTERN}`))
        problems.push(`${method} plugin routes are served; docs/api.md has no row for them`);
    } else if (!listed.has(r)) {
      problems.push(`${r} is served; docs/api.md does not list it`);
    }
  }
  for (const r of rows) {
    const [method, p] = r.split(' ') as [string, string];
    if (p === PLUGIN_PATTERN) continue;
    if (!p.startsWith('/')) {
      if (!servedSet.has(`${method} ${PLUGIN_PREFIX}${p}`))
        problems.push(`docs/api.md lists plugin \`${r}\`, which the worker does not serve`);
    } else if (p.startsWith('/api/v1/') && !servedSet.has(r)) {
      problems.push(`docs/api.md lists ${r}, which the worker does not serve`);
    }
  }
  return [...new Set(problems)];
}

/** The page without the row of `route` (a control: the checker must notice it is gone). */
export function withoutRow(markdown: string, route: string): string {
  const lines = markdown.split('\n');
  const i = lines.findIndex((l) => {
    const m = ROW.exec(l);
    return m !== null && `${m[1]} ${m[2]}` === route;
  });
  if (i < 0) throw new Error(`docs/api.md has no row for ${route}`);
  lines.splice(i, 1);
  return lines.join('\n');
}
