import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { UpdateStep } from '@persona-browser/contracts';
import type { PersonaImage } from './image';
import type { UpdateLog } from './log';
import { run } from './run';
import type { RunAs } from './run';
import type { StateFile } from './state';

/** Runs one timed step of an update; the caller records the time. */
export type Step = <T>(name: UpdateStep, work: () => Promise<T>) => Promise<T>;

/** A Step that records each step's milliseconds in `timings`, whether it worked or not. */
export function timedStep(timings: Partial<Record<UpdateStep, number>>): Step {
  return async (name, work) => {
    const started = Date.now();
    try {
      return await work();
    } finally {
      timings[name] = Date.now() - started;
    }
  };
}

const INSTALL_TIMEOUT_MS = 20 * 60_000;
const BUILD_TIMEOUT_MS = 10 * 60_000;

/**
 * Makes the checked-out commit runnable: dependencies when the lock file differs from the one
 * node_modules came from, the TypeScript build (incremental, so a small change builds little),
 * and the persona image when what it holds changed (or the image compose built, when it holds
 * the same). Answers the image the waker must use.
 */
export class Preparer {
  constructor(
    private readonly repoRoot: string,
    private readonly state: StateFile,
    private readonly log: UpdateLog,
    private readonly image: PersonaImage | null,
    private readonly as: RunAs | null = null,
    /** PERSONA_REGISTRY: each commit's image is pushed there, and the waker runs that name. */
    private readonly registry: string | null = null,
  ) {}

  private lockHash(): string {
    const lock = path.join(this.repoRoot, 'package-lock.json');
    return createHash('sha256').update(fs.readFileSync(lock)).digest('hex');
  }

  /**
   * Whether node_modules matches the lock file. Before the supervisor's first install it
   * trusts an install npm finished after the lock file last changed (npm's own hidden lock
   * file is then the newer one).
   */
  private installed(lock: string): boolean {
    const modules = path.join(this.repoRoot, 'node_modules');
    if (!fs.existsSync(modules)) return false;
    const known = this.state.get().installedLock;
    if (known) return known === lock;
    try {
      const hidden = fs.statSync(path.join(modules, '.package-lock.json')).mtimeMs;
      const trusted = hidden >= fs.statSync(path.join(this.repoRoot, 'package-lock.json')).mtimeMs;
      if (trusted) this.state.update({ installedLock: lock });
      return trusted;
    } catch {
      return false;
    }
  }

  /**
   * Prepares the checked-out commit `commit`; answers the persona image the waker must use:
   * with a registry, the name it was pushed under there (which every node can pull).
   */
  async prepare(step: Step, commit: string): Promise<string | null> {
    const lock = this.lockHash();
    if (this.installed(lock)) {
      this.log.info('install: package-lock.json unchanged, dependencies kept');
    } else {
      await step('install', () =>
        run('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], {
          cwd: this.repoRoot,
          timeoutMs: INSTALL_TIMEOUT_MS,
          as: this.as,
        }),
      );
      this.state.update({ installedLock: lock });
      this.log.info('install: dependencies installed from the new package-lock.json');
    }
    await step('build', () =>
      run('npm', ['run', 'build', '--silent'], {
        cwd: this.repoRoot,
        timeoutMs: BUILD_TIMEOUT_MS,
        as: this.as,
      }),
    );
    this.log.info('build: done');
    if (!this.image) return null;
    const local = await this.localImage(step, this.image);
    if (!this.registry) return local;
    const image = this.image;
    const remote = image.registryName(this.registry, commit);
    await step('push', () => image.push(local, remote));
    this.log.info(`image: ${local} pushed as ${remote}`);
    return remote;
  }

  /** This machine's image of the checkout's content: found, taken from compose, or built. */
  private async localImage(step: Step, image: PersonaImage): Promise<string> {
    const plan = image.plan();
    if (await image.exists(plan.tag)) {
      this.log.info(`image: ${plan.tag} holds this content already, no build`);
      return plan.tag;
    }
    const adopted = await image.adopt(plan);
    if (adopted) {
      this.log.info(
        `image: ${adopted} (as docker compose built it) holds this content: reused as ${plan.tag}, no build`,
      );
    } else {
      await step('image', () => image.build(plan));
      this.log.info(`image: built ${plan.tag}`);
    }
    return plan.tag;
  }
}
