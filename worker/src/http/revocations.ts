/** Revoked token ids kept at most: the waker's list is bounded alike (expired ids leave it). */
export const MAX_REVOKED = 10_000;

/**
 * The token ids this worker refuses before their expiry: the list the waker pushes (it replaces
 * the last one whole), and the tokens this worker made itself and ended (an `ask-person` link
 * once the page is handed back). Whoever holds a connection opened with a token (a viewer
 * session, a DevTools client, an MCP session) listens, and closes it the moment its id is here.
 */
export class Revocations {
  /** id → when it may be forgotten (its token's expiry, epoch ms), or Infinity when unknown. */
  private readonly pushed = new Map<string, number>();
  private readonly own = new Map<string, number>();
  private readonly listeners = new Set<(ids: ReadonlySet<string>) => void>();

  constructor(private readonly now: () => number = Date.now) {}

  has(id: string): boolean {
    return this.pushed.has(id) || this.own.has(id);
  }

  /** The waker's whole list: what is not in it any more is no longer refused for its sake. */
  replace(ids: readonly string[]): void {
    const added = new Set(ids.filter((id) => !this.has(id)));
    this.pushed.clear();
    for (const id of ids.slice(0, MAX_REVOKED)) this.pushed.set(id, Infinity);
    this.announce(added);
  }

  /** Ends one token this worker made; forgotten after `expS` (epoch seconds), when it expires. */
  revoke(id: string, expS: number): void {
    if (this.own.has(id)) return;
    this.sweep();
    this.own.set(id, expS * 1000);
    for (const oldest of this.own.keys()) {
      if (this.own.size <= MAX_REVOKED) break;
      this.own.delete(oldest);
    }
    this.announce(new Set([id]));
  }

  /** Calls `listener` with the ids newly revoked; returns the unsubscribe. */
  onRevoke(listener: (ids: ReadonlySet<string>) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get size(): number {
    this.sweep();
    return this.pushed.size + this.own.size;
  }

  private sweep(): void {
    const now = this.now();
    for (const [id, until] of this.own) if (until <= now) this.own.delete(id);
  }

  private announce(ids: ReadonlySet<string>): void {
    if (ids.size === 0) return;
    for (const l of [...this.listeners]) l(ids);
  }
}
