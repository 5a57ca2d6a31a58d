import type { InstanceHandle } from '../drivers/types';

/**
 * A persona's instances that must be known stopped before any start, so that a profile never
 * has two workers: the worker of a stop that failed, one a start left after its deadline, one
 * an earlier waker left that could not be removed. They serve nothing.
 */
export class Leftovers {
  private readonly handles: InstanceHandle[] = [];
  private failed = false;

  constructor(
    /** The driver's stop, with its deadline. */
    private readonly stop: (handle: InstanceHandle) => Promise<void>,
  ) {}

  get count(): number {
    return this.handles.length;
  }

  /** The last stop failed, and no stop has succeeded since. */
  get stopFailed(): boolean {
    return this.failed;
  }

  /** One more to stop; `first` puts it before the others (the worker just let go). */
  add(handle: InstanceHandle, first = false): void {
    if (first) this.handles.unshift(handle);
    else this.handles.push(handle);
  }

  /** An instance ended by itself: forgotten, and true, when it was one of these. */
  ended(id: string): boolean {
    const at = this.handles.findIndex((h) => h.id === id);
    if (at < 0) return false;
    this.handles.splice(at, 1);
    return true;
  }

  /**
   * Stops each, oldest first. The first stop that fails ends the call with its error; that
   * instance stays, to be stopped again.
   */
  async stopAll(): Promise<void> {
    for (let handle = this.handles[0]; handle; handle = this.handles[0]) {
      try {
        await this.stop(handle);
      } catch (err) {
        this.failed = true;
        throw err;
      }
      // Gone already (an exit seen meanwhile) counts as stopped.
      if (this.handles[0] === handle) this.handles.shift();
    }
    this.failed = false;
  }
}
