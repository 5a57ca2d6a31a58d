import fs from 'node:fs';
import path from 'node:path';
import { prop } from './util';

/**
 * The folder of the package a file belongs to: the nearest folder above `from` holding a
 * package.json. Found from the code's own location, so the same build works from a clone,
 * from an installed package and inside an image, whatever the package is called.
 */
export function packageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

/** The worker package's folder (holds `panel/` and `package.json`). */
export const WORKER_ROOT = packageRoot(__dirname);

export const PANEL_DIR = path.join(WORKER_ROOT, 'panel');
/** The plugins folder beside the worker's: `plugins/` of a clone, `/app/plugins` in the image. */
export const DEFAULT_PLUGINS_DIR = path.join(path.dirname(WORKER_ROOT), 'plugins');
/** The look and browser helpers the panels share (`@persona-browser/ui`), served at `/ui/`. */
export const UI_DIR = path.dirname(require.resolve('@persona-browser/ui/package.json'));

/**
 * The default repository root (`.env`, `.update-trigger`, git): the nearest folder above the
 * worker package that is a git checkout, else the current folder. `REPO_ROOT` overrides it.
 */
export function defaultRepoRoot(): string {
  for (let dir = WORKER_ROOT; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, '.git'))) return dir;
    if (path.dirname(dir) === dir) return process.cwd();
  }
}

export function workerVersion(): string {
  const pkg: unknown = JSON.parse(fs.readFileSync(path.join(WORKER_ROOT, 'package.json'), 'utf8'));
  const version = prop(pkg, 'version');
  return typeof version === 'string' ? version : '0.0.0';
}
