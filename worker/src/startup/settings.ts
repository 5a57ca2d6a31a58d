import type { ProxyIdentity } from '@persona-browser/contracts';
import type { Logger } from '@persona-browser/service-kit';
import { SecretValues, createLogger, fatal } from '@persona-browser/service-kit';
import { findBrowserBinary } from '../browser/launch';
import { loadConfig } from '../config';
import type { Config } from '../config';
import { readIdentity } from '../identity/read';
import { DEFAULT_PLUGINS_DIR, defaultRepoRoot } from '../paths';
import { discoverPlugins } from '../plugins/discover';
import type { Discovery } from '../plugins/discover';
import { familySecrets } from '../plugins/families';

export const PROGRAM = 'persona-browser';

/** What the worker knows before anything starts: its settings, its plugins and its logger. */
export interface WorkerSettings {
  config: Config;
  executablePath: string;
  /** The proxy identity the waker wrote for this wake; null without one. */
  identity: ProxyIdentity | null;
  plugins: Discovery;
  secrets: SecretValues;
  logger: Logger;
}

/**
 * Reads the settings, the browser binary and the proxy identity; a bad one ends the program
 * with one line (there is no logger yet, and nothing to stop). Then finds the plugins and makes
 * the logger, which redacts every secret the settings and plugins name.
 */
export function readSettings(env: NodeJS.ProcessEnv): WorkerSettings {
  let config: Config;
  let executablePath: string;
  let identity: ProxyIdentity | null;
  try {
    config = loadConfig(env, defaultRepoRoot(), DEFAULT_PLUGINS_DIR);
    executablePath = findBrowserBinary(config.chromePath);
    // A broken identity file stops the worker here: never a browser without its proxy.
    identity = readIdentity(config.personaDir);
  } catch (err) {
    fatal(PROGRAM, err instanceof Error ? err.message : String(err));
  }
  // Proxy credentials belong to the waker; the browser and its children never see them.
  delete env.PROXY_USERNAME;
  delete env.PROXY_PASSWORD;

  // Plugins are found before anything logs, so that their families' secrets are redacted too.
  const plugins = discoverPlugins(config.pluginsDir);
  const secrets = new SecretValues([
    config.serviceKey,
    config.visionKeyGratis,
    config.visionKeyPaga,
    ...familySecrets(plugins, config.env),
    identity?.proxy.password ?? null,
  ]);
  const logger = createLogger({ secrets });
  for (const b of plugins.broken)
    logger.error('plugin skipped', { plugin: b.name, error: b.error });
  logger.info('plugins loaded', {
    dir: plugins.root,
    count: plugins.plugins.length,
    plugins: plugins.plugins.map((p) => p.name),
  });
  return { config, executablePath, identity, plugins, secrets, logger };
}
