import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type Docker from 'dockerode';

/**
 * Bind mounts name HOST paths. When the waker itself runs in a container (compose), the persona
 * folder it sees is a mount: translate through its own container's mounts. Outside a container,
 * the path is the host path already.
 */
export async function hostPathTranslator(
  docker: Docker,
  inContainer = fs.existsSync('/.dockerenv'),
): Promise<(p: string) => string> {
  if (!inContainer) return (p) => p;
  for (const id of ownContainerIds()) {
    try {
      const self = await docker.getContainer(id).inspect();
      const mounts = self.Mounts.filter((m) => m.Source && m.Destination);
      return (p) => throughMounts(mounts, p);
    } catch {
      /* not this one */
    }
  }
  // Not a container this engine knows (another engine): the paths are taken as they are.
  return (p) => p;
}

function readOr(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/**
 * Ways to name the container this process runs in: its id as the engine's own mounts
 * (/etc/hostname, /etc/hosts) and cgroups show it, then the hostname (which is the HOST's
 * name under `network_mode: host`, hence not first).
 */
export function ownContainerIds(
  mountinfo = readOr('/proc/self/mountinfo'),
  cgroup = readOr('/proc/self/cgroup'),
): string[] {
  const ids = new Set<string>();
  for (const [, id] of mountinfo.matchAll(/\/containers\/([0-9a-f]{64})\//g)) if (id) ids.add(id);
  for (const [, id] of cgroup.matchAll(/(?:docker[-/])([0-9a-f]{64})/g)) if (id) ids.add(id);
  ids.add(os.hostname());
  return [...ids];
}

/** The host path of `p` seen inside a container with these mounts (unchanged if unmounted). */
export function throughMounts(
  mounts: Array<{ Source: string; Destination: string }>,
  p: string,
): string {
  // Longest destination first: a nested mount wins over its parent.
  const sorted = [...mounts].sort((a, b) => b.Destination.length - a.Destination.length);
  for (const m of sorted) {
    const rel = path.relative(m.Destination, p);
    if (rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel))) {
      return path.join(m.Source, rel);
    }
  }
  return p;
}
