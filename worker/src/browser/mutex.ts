/** A FIFO lock whose waiters give up after a deadline. */
export class TimedMutex {
  private held = false;
  private readonly waiters: Array<{ grant: () => void }> = [];

  get locked(): boolean {
    return this.held;
  }

  /** Resolves with a release function, or rejects with `onTimeout()` after `timeoutMs`. */
  acquire(timeoutMs: number, onTimeout: () => Error): Promise<() => void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          clearTimeout(timer);
          resolve(this.releaser());
        },
      };
      const timer = setTimeout(() => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(onTimeout());
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiters.shift();
      if (next) next.grant();
      else this.held = false;
    };
  }
}
