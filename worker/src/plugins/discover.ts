import fs from 'node:fs';
import path from 'node:path';
import type Joi from 'joi';
import type {
  FamilyFile,
  ManifestFile,
  PluginDescriptor,
  PluginModule,
} from '@persona-browser/plugin-sdk';
import { isRecord } from '@persona-browser/service-kit';
import { NotImplemented, errorMessage } from '../errors';
import { ManifestError, readFamily, readManifest } from './manifest';
import { describeParameter, parametersSchema } from './params';

export const MANIFEST = 'manifest.json';
export const FAMILY = 'family.json';
/** Compiled implementations live under `<root>/dist/<plugin folder>/index.js`. */
export const BUILD_DIR = 'dist';
const SKIP = new Set([BUILD_DIR, 'node_modules', 'test']);

export interface LoadedFamily {
  /** Folder path under the plugins root, such as `archive` or `bank/bank-a`. */
  name: string;
  file: FamilyFile;
}

export interface LoadedPlugin {
  /** Registry name: the folder path under the plugins root. */
  name: string;
  /** The route's tail: the folder path with underscores as hyphens. */
  routePath: string;
  dir: string;
  manifest: ManifestFile;
  descriptor: PluginDescriptor;
  schema: Joi.ObjectSchema;
  module: PluginModule;
  family: LoadedFamily | null;
}

/** A plugin that did not load, by name, and why. */
export interface BrokenPlugin {
  name: string;
  error: string;
}

export interface Discovery {
  root: string;
  plugins: LoadedPlugin[];
  broken: BrokenPlugin[];
}

export const pluginRoute = (routePath: string): string => `/api/v1/{page_id}/plugin/${routePath}`;

/** Folders holding a manifest, as paths under `root` with `/` separators, sorted. */
function manifestFolders(root: string): string[] {
  const found: string[] = [];
  const walk = (rel: string): void => {
    const dir = path.join(root, rel);
    const entries = fs.readdirSync(dir, { withFileTypes: true });
    if (rel && entries.some((e) => e.isFile() && e.name === MANIFEST)) found.push(rel);
    for (const e of entries) {
      if (!e.isDirectory() || e.name.startsWith('.') || SKIP.has(e.name)) continue;
      walk(rel ? `${rel}/${e.name}` : e.name);
    }
  };
  if (fs.existsSync(root)) walk('');
  return found.sort();
}

/** The nearest family.json above a plugin folder (below the root), read once per folder. */
function familyOf(
  root: string,
  rel: string,
  cache: Map<string, LoadedFamily | null>,
): LoadedFamily | null {
  const parts = rel.split('/');
  for (let n = parts.length - 1; n >= 1; n -= 1) {
    const name = parts.slice(0, n).join('/');
    if (!cache.has(name)) {
      const file = path.join(root, name, FAMILY);
      cache.set(name, fs.existsSync(file) ? { name, file: readFamily(file) } : null);
    }
    const family = cache.get(name);
    if (family) return family;
  }
  return null;
}

/**
 * A module's default export is a plugin when it has run() and, if any, a validate function. Its
 * parameter types cannot be checked at run time: the manifest's schema validates every call's
 * parameters before run() sees them.
 */
function isPluginModule(m: Record<string, unknown>): m is Record<string, unknown> & PluginModule {
  return typeof m.run === 'function' && ['undefined', 'function'].includes(typeof m.validate);
}

function loadModule(file: string): PluginModule {
  if (!fs.existsSync(file)) {
    throw new ManifestError(`no implementation at ${file} (is the plugins package built?)`);
  }
  let exported: unknown;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- plugins load at run time
    exported = require(file);
  } catch (err) {
    throw new ManifestError(`${file} failed to load: ${errorMessage(err)}`);
  }
  const m = isRecord(exported) && 'default' in exported ? exported.default : exported;
  if (!isRecord(m) || typeof m.run !== 'function')
    throw new ManifestError(`${file} exports no plugin (a default export with run())`);
  if (!isPluginModule(m)) throw new ManifestError(`${file}: validate must be a function`);
  return m;
}

/** A placeholder's route is mounted and answers, to every call, that it is not built yet. */
function placeholderModule(name: string): PluginModule {
  return {
    run: (ctx) =>
      Promise.reject(
        new NotImplemented(
          `${name} is not implemented yet: the route is a placeholder`,
          ctx.pageId,
        ),
      ),
  };
}

/** Every default must pass its own parameter's rules. */
function checkDefaults(manifest: ManifestFile, schema: Joi.ObjectSchema, file: string): void {
  for (const p of manifest.parameters) {
    if (p.default === undefined || p.default === null) continue;
    const { error } = schema.extract(p.name).validate(p.default);
    if (error) throw new ManifestError(`${file}: default of ${p.name}: ${error.message}`);
  }
}

function load(root: string, rel: string, families: Map<string, LoadedFamily | null>): LoadedPlugin {
  const dir = path.join(root, rel);
  const manifestFile = path.join(dir, MANIFEST);
  const manifest = readManifest(manifestFile);
  const schema = parametersSchema(manifest.parameters);
  checkDefaults(manifest, schema, manifestFile);
  const family = familyOf(root, rel, families);
  const module = manifest.placeholder
    ? placeholderModule(rel)
    : loadModule(path.join(root, BUILD_DIR, rel, 'index.js'));
  const routePath = rel.replace(/_/g, '-');
  return {
    name: rel,
    routePath,
    dir,
    manifest,
    schema,
    module,
    family,
    descriptor: {
      name: rel,
      description: manifest.description,
      methods: manifest.methods,
      bg_color: manifest.bg_color,
      parameters: manifest.parameters.map(describeParameter),
      route: pluginRoute(routePath),
    },
  };
}

/**
 * Finds and loads every plugin under `root`. A plugin that cannot load (a bad manifest or
 * family file, an implementation that throws on import, a route another plugin also claims)
 * is reported by name and left out; the others load.
 */
export function discoverPlugins(root: string): Discovery {
  const plugins: LoadedPlugin[] = [];
  const broken: BrokenPlugin[] = [];
  const families = new Map<string, LoadedFamily | null>();
  for (const rel of manifestFolders(root)) {
    try {
      plugins.push(load(root, rel, families));
    } catch (err) {
      broken.push({ name: rel, error: errorMessage(err) });
    }
  }
  const byRoute = new Map<string, LoadedPlugin[]>();
  for (const p of plugins) byRoute.set(p.routePath, [...(byRoute.get(p.routePath) ?? []), p]);
  const clashing = new Set<LoadedPlugin>();
  for (const [route, claimants] of byRoute) {
    if (claimants.length < 2) continue;
    const names = claimants.map((c) => c.name).join(', ');
    for (const c of claimants) {
      clashing.add(c);
      broken.push({ name: c.name, error: `route ${route} is claimed by ${names}` });
    }
  }
  return {
    root,
    plugins: plugins.filter((p) => !clashing.has(p)),
    broken: broken.sort((a, b) => a.name.localeCompare(b.name)),
  };
}

/** The plugin's README, or the nearest one up its folder tree below the root; null if none. */
export function readmeOf(root: string, plugin: LoadedPlugin): string | null {
  const parts = plugin.name.split('/');
  for (let n = parts.length; n >= 1; n -= 1) {
    const file = path.join(root, ...parts.slice(0, n), 'README.md');
    if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8');
  }
  return null;
}
