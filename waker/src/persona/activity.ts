/**
 * Client activity on one persona's port, counted by its front door: requests in flight, open
 * WebSockets (a live view), and when the last of them finished.
 */
export class Activity {
  private inFlight = 0;
  private sockets = 0;
  private lastMs = Date.now();
  private lastRequest: Date | null = null;
  /** A page load in progress: its files and first calls are still to come (hold). */
  private heldUntil = 0;

  requestStarted(): void {
    this.inFlight += 1;
    this.lastRequest = new Date();
    this.lastMs = Date.now();
  }

  requestEnded(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    this.lastMs = Date.now();
  }

  socketOpened(): void {
    this.sockets += 1;
    this.lastRequest = new Date();
    this.lastMs = Date.now();
  }

  socketClosed(): void {
    this.sockets = Math.max(0, this.sockets - 1);
    this.lastMs = Date.now();
  }

  /** Restarts the idle clock (a fresh wake counts as activity). */
  touch(): void {
    this.lastMs = Date.now();
  }

  /**
   * Keeps the persona in use for `ms` from now: a page just loaded (or woken for) asks for its
   * scripts, styles and first calls next, and on a slow client that takes seconds. The idle
   * clock starts again when the hold ends.
   */
  hold(ms: number, now = Date.now()): void {
    this.heldUntil = Math.max(this.heldUntil, now + ms);
  }

  /** A request in flight, a socket open or a page load held. */
  busy(now = Date.now()): boolean {
    return this.inFlight > 0 || this.sockets > 0 || now < this.heldUntil;
  }

  /**
   * Why the persona must stay awake, else null. A person in control of a page works through
   * the live view, whose socket is open while they do.
   */
  busyReason(): string | null {
    if (this.sockets > 0) return 'live view open';
    if (this.inFlight > 0) return 'request in flight';
    if (this.busy()) return 'page loading';
    return null;
  }

  /** When the last request or socket ended, the last wake or a page load's hold (ms since the epoch). */
  lastActiveMs(): number {
    return Math.max(this.lastMs, this.heldUntil);
  }

  /** Milliseconds since the last request or socket ended; 0 while busy. */
  idleMs(now = Date.now()): number {
    return this.busy(now) ? 0 : Math.max(0, now - this.lastActiveMs());
  }

  /** Whole idle seconds, null while busy (PersonaInfo's idle_seconds). */
  idleSeconds(now = Date.now()): number | null {
    return this.busy(now) ? null : Math.floor(this.idleMs(now) / 1000);
  }

  lastRequestIso(): string | null {
    return this.lastRequest?.toISOString() ?? null;
  }
}
