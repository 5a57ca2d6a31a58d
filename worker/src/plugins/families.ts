import type { Blacklist, BlacklistPattern } from '../capture/blacklist';
import { hostnameOf } from '../capture/blacklist';
import type { Discovery, LoadedFamily } from './discover';

type Env = Readonly<Record<string, string | undefined>>;

/** The families of the loaded plugins, each once. */
function families(found: Discovery): LoadedFamily[] {
  const out = new Map<string, LoadedFamily>();
  for (const p of found.plugins) if (p.family) out.set(p.family.name, p.family);
  return [...out.values()];
}

/** The values of every secret a family declares: the logger redacts them. */
export function familySecrets(found: Discovery, env: Env): string[] {
  return families(found).flatMap((f) =>
    (f.file.secrets ?? []).map((name) => env[name]).filter((v): v is string => Boolean(v)),
  );
}

/** `/source/flags` is a regular expression; anything else a substring. */
export function parsePattern(p: string): BlacklistPattern {
  const m = /^\/(.+)\/([a-z]*)$/.exec(p);
  if (m?.[1] === undefined) return p;
  try {
    return new RegExp(m[1], m[2]);
  } catch {
    return p;
  }
}

/**
 * Registers each family's blacklist for the site its base-URL setting points at (the real
 * site by default, a fixture under test). Answers what could not be registered.
 */
export function registerBlacklists(
  found: Discovery,
  env: Env,
  blacklist: Blacklist,
): Array<{ family: string; error: string }> {
  const problems: Array<{ family: string; error: string }> = [];
  for (const f of families(found)) {
    const bl = f.file.blacklist;
    if (!bl) continue;
    const value = env[bl.site_setting] || f.file.settings?.[bl.site_setting]?.default || '';
    const site = hostnameOf(value);
    if (!site) {
      problems.push({ family: f.name, error: `${bl.site_setting} is not a URL: ${value}` });
      continue;
    }
    const patterns = bl.patterns.map(parsePattern);
    for (const host of [site, ...(bl.also_sites ?? [])]) blacklist.add(host, patterns, f.name);
  }
  return problems;
}
