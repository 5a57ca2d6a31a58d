import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { errorMessage } from '@persona-browser/service-kit';
import { ApngWriter } from './apng';
import type { FrameBudget } from './frame-budget';
import type {
  RecordingKind,
  RecordingMeta,
  RecordingOutcome,
  RecordingStore,
} from './recording-store';
import { parseXwd } from './xwd';

/** A dump of the whole screen in XWD form. */
export type Grab = () => Promise<Buffer>;

/** The most bytes one dump of the screen may have (a 4K screen is 33 MB). */
const MAX_DUMP = 64 * 1024 * 1024;

/**
 * The screen of an X display, as x11-apps' `xwd -root` dumps it (a display the worker did not
 * start): a client of the X server, outside the browser, so no page can see it is taken.
 */
export function xwdGrab(display: string): Grab {
  return () =>
    new Promise((resolve, reject) => {
      execFile(
        'xwd',
        ['-root', '-silent', '-display', display],
        { encoding: 'buffer', maxBuffer: MAX_DUMP },
        (err, stdout) => (err ? reject(new Error(`xwd: ${err.message}`)) : resolve(stdout)),
      );
    });
}

/** The screen as Xvfb keeps it in its `-fbdir` file: read with no X round trip at all. */
export function fileGrab(file: string): Grab {
  return () => fs.promises.readFile(file);
}

export interface RecorderOptions {
  store: RecordingStore;
  grab: Grab;
  fps: number;
  /** A recording stops growing past this many bytes (the store's whole cap). */
  maxBytes: number;
  /** The memory all recordings under way in the worker share (RECORDING_MEMORY_MB). */
  budget: FrameBudget;
  now?: () => number;
}

/** What a recording is of: a plugin call on a page, or a lease of a page (`plugin` ''). */
export interface Recorded {
  kind: RecordingKind;
  plugin: string;
  pageId: string;
}

/** One recording under way. */
export class Recording {
  readonly id: string;
  private readonly startedAt: Date;
  private readonly writer = new ApngWriter();
  private stopped = false;
  private wake: (() => void) | null = null;
  private failure: string | null = null;
  private truncated = false;
  /** Bytes of frames taken from the shared budget, given back once written or dropped. */
  private taken = 0;
  private readonly loop: Promise<void>;

  constructor(
    private readonly opts: RecorderOptions,
    private readonly what: Recorded,
  ) {
    const { id, time } = opts.store.nextId();
    this.id = id;
    this.startedAt = time;
    this.loop = this.run();
  }

  /** Whether it stopped growing at a cap (its own, or the worker's RECORDING_MEMORY_MB). */
  get atCap(): boolean {
    return this.truncated;
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  /** Takes one frame; false once the recording cannot go on. */
  private async frame(): Promise<boolean> {
    const at = this.now();
    const admit = (bytes: number): boolean => {
      if (!this.opts.budget.take(bytes)) return false;
      this.taken += bytes;
      return true;
    };
    try {
      const added = await this.writer.add(parseXwd(await this.opts.grab()), at, admit);
      // The worker's recordings hold all the memory they may: this one stops where it is.
      if (added === 'refused') {
        this.truncated = true;
        return false;
      }
    } catch (err) {
      this.failure = `the screen could not be read: ${errorMessage(err)}`;
      return false;
    }
    if (this.writer.size > this.opts.maxBytes) {
      this.truncated = true;
      return false;
    }
    return true;
  }

  private async run(): Promise<void> {
    const interval = 1000 / this.opts.fps;
    while (!this.stopped) {
      const started = this.now();
      if (!(await this.frame())) return;
      const wait = interval - (this.now() - started);
      if (wait > 0 && !this.stopped)
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, wait);
          this.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
    }
    // The screen as the call left it.
    if (!this.truncated && !this.failure) await this.frame();
  }

  /**
   * Stops taking frames and stores the recording. `withheld` says why its pixels must not be
   * kept (a secret on the page), or null.
   */
  async finish(outcome: RecordingOutcome, withheld: () => Promise<string | null>): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    try {
      await this.write(outcome, withheld);
    } finally {
      // Written or dropped, its frames leave memory and the worker's budget.
      this.writer.discard();
      this.opts.budget.give(this.taken);
      this.taken = 0;
    }
  }

  private async write(
    outcome: RecordingOutcome,
    withheld: () => Promise<string | null>,
  ): Promise<void> {
    const end = this.now();
    const why = this.failure ?? (this.writer.frameCount === 0 ? 'no frame' : await withheld());
    const size = this.writer.screenSize;
    const meta: RecordingMeta = {
      id: this.id,
      kind: this.what.kind,
      plugin: this.what.plugin,
      page_id: this.what.pageId,
      time: this.startedAt.toISOString(),
      duration_ms: end - this.startedAt.getTime(),
      outcome,
      frames: why ? 0 : this.writer.frameCount,
      width: size?.width ?? 0,
      height: size?.height ?? 0,
      fps: this.opts.fps,
      truncated: this.truncated,
      missing: why,
    };
    await this.opts.store.save(meta, why ? null : this.writer.finish(1000 / this.opts.fps));
  }
}

/** Starts recordings of the screen: one per plugin call or lease, when recording is on. */
export class Recorder {
  constructor(private readonly opts: RecorderOptions) {}

  get store(): RecordingStore {
    return this.opts.store;
  }

  start(what: Recorded): Recording {
    return new Recording(this.opts, what);
  }
}
