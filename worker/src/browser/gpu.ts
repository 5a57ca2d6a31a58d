import fs from 'node:fs';
import path from 'node:path';
import { errnoCode } from '@persona-browser/service-kit';

/** Where the kernel puts the GPUs' nodes; the waker passes this folder into a container. */
export const DRI_DIR = '/dev/dri';

/**
 * Why the browser cannot draw on a GPU here, or null when it can: the first render node
 * (`renderD*`) under `dir` that this process can open for reading and writing, as the GPU
 * process will. Opening it (not just seeing it) also catches a container that sees the node
 * but whose device rules refuse it (a bind mount without the device).
 */
export function renderNodeProblem(dir: string = DRI_DIR): string | null {
  let nodes: string[];
  try {
    nodes = fs.readdirSync(dir).filter((n) => /^renderD\d+$/.test(n));
  } catch (err) {
    return `GPU=dri but ${dir} cannot be read (${errnoCode(err) ?? String(err)}): pass the render node into the persona's container`;
  }
  if (nodes.length === 0) return `GPU=dri but ${dir} holds no render node (renderD*)`;
  const refusals: string[] = [];
  for (const name of nodes.sort()) {
    const file = path.join(dir, name);
    try {
      fs.closeSync(fs.openSync(file, fs.constants.O_RDWR));
      return null;
    } catch (err) {
      refusals.push(`${file}: ${errnoCode(err) ?? String(err)}`);
    }
  }
  return `GPU=dri but no render node can be opened (${refusals.join(', ')}): the worker's user needs the node's group`;
}
