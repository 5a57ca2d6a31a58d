import fs from 'node:fs';
import path from 'node:path';

/**
 * Records the node a persona was placed on as `NODE=` in its persona.env: the line replaced
 * where there is one, else added. Written beside and renamed over, so a reader never sees half.
 */
export function recordNode(dir: string, node: string): void {
  const file = path.join(dir, 'persona.env');
  const text = fs.readFileSync(file, 'utf8');
  const lines = text.split('\n');
  const at = lines.findIndex((l) => /^\s*(export\s+)?NODE\s*=/.test(l));
  if (at >= 0) lines[at] = `NODE=${node}`;
  else {
    if (lines[lines.length - 1] === '') lines.pop();
    lines.push(`NODE=${node}`, '');
  }
  const tmp = `${file}.${process.pid}.tmp`;
  const stat = fs.statSync(file);
  fs.writeFileSync(tmp, lines.join('\n'), { mode: stat.mode });
  // A waker running as root leaves the file to the user who owns it.
  if (process.getuid?.() === 0) fs.chownSync(tmp, stat.uid, stat.gid);
  fs.renameSync(tmp, file);
}
