/**
 * The memory every recording under way in the worker draws its frames from
 * (RECORDING_MEMORY_MB): frames stay in memory until their recording is written, so without
 * one cap a few long recordings at once (a lease per page, a plugin call beside them) could
 * each grow to the per-recording cap. A recording takes each frame's bytes before it keeps the
 * frame, stops growing when the budget would pass its cap, and gives back all it took once it
 * is written or dropped.
 */
export class FrameBudget {
  private held = 0;

  constructor(readonly capBytes: number) {}

  /** Takes `bytes`; false (and nothing taken) when that would pass the cap. */
  take(bytes: number): boolean {
    if (this.held + bytes > this.capBytes) return false;
    this.held += bytes;
    return true;
  }

  /** Gives back `bytes` taken earlier. */
  give(bytes: number): void {
    this.held = Math.max(0, this.held - bytes);
  }

  /** Bytes the recordings under way hold now. */
  get heldBytes(): number {
    return this.held;
  }
}
