import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A repository script run as CI runs it, on small git trees made for each case. */
export function scriptOnTrees(script: string): {
  /** A git checkout holding `files` (tracked); the script's exit code and what it printed. */
  runIn: (files: Record<string, string>, args?: string[]) => { code: number | null; out: string };
  /** Removes every tree made. */
  cleanUp: () => void;
} {
  const file = path.resolve(__dirname, '..', '..', 'scripts', script);
  const roots: string[] = [];
  return {
    runIn: (files, args = []) => {
      const root = fs.mkdtempSync(path.join(os.tmpdir(), `pb-${path.parse(script).name}-`));
      roots.push(root);
      for (const [name, text] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
        fs.writeFileSync(path.join(root, name), text);
      }
      execFileSync('git', ['init', '-q'], { cwd: root });
      execFileSync('git', ['add', '.'], { cwd: root });
      const run = spawnSync(process.execPath, [file, ...args, root], { encoding: 'utf8' });
      return { code: run.status, out: run.stdout + run.stderr };
    },
    cleanUp: () => {
      for (const root of roots.splice(0)) fs.rmSync(root, { recursive: true, force: true });
    },
  };
}
