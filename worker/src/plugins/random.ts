import { seededRng, systemRng } from '../human/random';
import type { Rng } from '../human/types';

/** FNV-1a of a plugin's name: its own stream of a seed. */
function hashName(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i += 1) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/**
 * The random source of each plugin: with a seed (PLUGIN_SEED), one stream per plugin, so that
 * a plugin's draws repeat whatever other plugins ran in between; without one, unpredictable.
 */
export function pluginRandom(seed: number | null): (plugin: string) => Rng {
  const streams = new Map<string, Rng>();
  return (plugin) => {
    let rng = streams.get(plugin);
    if (!rng) {
      rng = seed === null ? systemRng() : seededRng(seed * 0x100000000 + hashName(plugin));
      streams.set(plugin, rng);
    }
    return rng;
  };
}
