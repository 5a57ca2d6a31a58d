import { execFile } from 'node:child_process';
import path from 'node:path';
import { isRecord } from '@persona-browser/service-kit';

/** What a worker answers without a browser (worker/src/startup/describe.ts). */
export interface WorkerDescription {
  /** `GET /api/v1/plugins`. */
  plugins: Record<string, unknown>;
  /** Each plugin's README, by registry name (null: none). */
  docs: Record<string, string | null>;
  /** `GET /openapi.json`. */
  openapi: Record<string, unknown>;
}

/** How long building the description may take (it loads every plugin once). */
const DESCRIBE_TIMEOUT_MS = 60_000;

/**
 * The plugin list, plugin docs and API document of this checkout's worker, made by the worker's
 * own code (`node worker/dist/startup/describe.js`) once per plugins folder and kept for the
 * waker's life: they change only with the code, and a new commit restarts the waker. A failure
 * is not kept, so the next request tries again.
 */
export class WorkerDescriptions {
  private readonly byDir = new Map<string, Promise<WorkerDescription>>();

  constructor(private readonly repoRoot: string) {}

  /** The description for a persona whose `PLUGINS_DIR` is `pluginsDir` (undefined: the default). */
  get(pluginsDir: string | undefined): Promise<WorkerDescription> {
    const key = pluginsDir ?? '';
    let found = this.byDir.get(key);
    if (!found) {
      found = this.run(pluginsDir);
      found.catch(() => this.byDir.delete(key));
      this.byDir.set(key, found);
    }
    return found;
  }

  private run(pluginsDir: string | undefined): Promise<WorkerDescription> {
    const script = path.join(this.repoRoot, 'worker', 'dist', 'startup', 'describe.js');
    const env: Record<string, string> = { PATH: process.env.PATH ?? '', REPO_ROOT: this.repoRoot };
    if (pluginsDir) env.PLUGINS_DIR = pluginsDir;
    return new Promise((resolve, reject) => {
      execFile(
        process.execPath,
        [script],
        { env, timeout: DESCRIBE_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 },
        (err, stdout, stderr) => {
          if (err) {
            reject(new Error(`the worker's description failed: ${stderr.trim() || err.message}`));
            return;
          }
          try {
            const doc: unknown = JSON.parse(stdout);
            if (
              !isRecord(doc) ||
              !isRecord(doc.plugins) ||
              !isRecord(doc.docs) ||
              !isRecord(doc.openapi)
            )
              throw new Error('not a description');
            const docs: Record<string, string | null> = {};
            for (const [k, v] of Object.entries(doc.docs))
              docs[k] = typeof v === 'string' ? v : null;
            resolve({ plugins: doc.plugins, docs, openapi: doc.openapi });
          } catch (parseErr) {
            reject(new Error(`the worker's description is unreadable: ${String(parseErr)}`));
          }
        },
      );
    });
  }
}
