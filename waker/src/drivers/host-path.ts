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
  let mounts: Array<{ Source: string; Destination: string }> = [];
  try {
    const self = await docker.getContainer(os.hostname()).inspect();
    mounts = self.Mounts.filter((m) => m.Source && m.Destination);
  } catch {
    // Not a container this engine knows (another engine, or a renamed hostname).
    return (p) => p;
  }
  return (p) => throughMounts(mounts, p);
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
