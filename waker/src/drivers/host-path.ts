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
  // Longest destination first: a nested mount wins over its parent.
  mounts.sort((a, b) => b.Destination.length - a.Destination.length);
  return (p) => {
    for (const m of mounts) {
      const rel = path.relative(m.Destination, p);
      if (rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel))) {
        return path.join(m.Source, rel);
      }
    }
    return p;
  };
}
