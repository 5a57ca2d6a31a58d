import type { GuestTap, WireCommands } from './wire-commands';
import type { GuestHost } from './guest-link';
import { GuestLink } from './guest-link';
import type { GuestPolicy } from './guest-policy';
import type { Message } from './guest-wire';
import { leadingId, parseMessage, targetInfoOf, trailingSession } from './guest-wire';

/**
 * Outside DevTools clients (puppeteer's or Playwright's `connect`) on the persona's browser,
 * each confined to its own targets.
 *
 * A guest does not get a connection of its own to Chromium: the browser is driven over a pipe
 * and opens no port a page could find. Each guest gets a browser-target session on the
 * worker's pipe (`Target.attachToBrowserTarget`), which behaves as a browser connection of its
 * own: its `Target.setDiscoverTargets` and `Target.setAutoAttach` are its own, and the sessions
 * it attaches are children of it. The mux gives each guest's commands ids of a range of its
 * own, sends a guest's browser-level commands on its browser session, and hands the replies
 * and events back as the guest expects them (its ids, no session for the browser level). The
 * worker's puppeteer never sees a guest's messages.
 *
 * What a guest may touch is decided here, per message:
 * - targets it created (`Target.createTarget`), and pages those opened;
 * - a page its policy lets it have (the pool page whose lease it holds), asked each time;
 * - nothing else: other targets never appear in its discovery or `getTargets`, a command naming
 *   one is answered with an error, and the browser's auto-attach to one is undone before the
 *   guest sees it (the target is released if it was held for the debugger).
 * Closing the browser, or a second browser session, is refused. When a guest goes, the targets
 * it created are closed.
 */

/** Ids of guests' commands: above the worker's own ranges, inside Chromium's 32-bit range. */
const FIRST_ID = 1_900_000_000;
const LAST_ID = 2_147_000_000;

interface Pending {
  link: GuestLink;
  /** The guest's own id; null for a command the link sent for itself. */
  clientId: number | null;
  /** Whether the guest sent it on a session (else at the browser level). */
  onSession: boolean;
  method: string;
  /** For the link's own commands: the reply. */
  settle?: (reply: Message) => void;
}

/** Every guest of one browser. */
export class GuestMux implements GuestTap, GuestHost {
  private readonly links = new Set<GuestLink>();
  /** Every session a guest has: its browser session, the ones it attached, the ones undone. */
  private readonly sessions = new Map<string, GuestLink>();
  private readonly pending = new Map<number, Pending>();
  private nextId = FIRST_ID;
  /** The browser target of the worker's own connection (its puppeteer attaches to it). */
  private rootBrowser: string | null = null;
  /** Guests' browser sessions being opened. */
  private opening = 0;
  /** Every guest's browser session. */
  private readonly browserSessions = new Set<string>();

  constructor(private readonly wire: WireCommands) {
    wire.tapGuests(this);
  }

  /** A new guest with its browser session; rejects when the browser is gone. */
  async open(policy: GuestPolicy): Promise<GuestLink> {
    if (this.wire.isClosed) throw new Error('the browser is not running');
    const link = new GuestLink(this, policy);
    this.links.add(link);
    try {
      if (this.rootBrowser === null) {
        const own = await this.command(link, 'Target.getTargetInfo', {});
        const info = targetInfoOf(own.result?.targetInfo);
        if (!info) throw new Error(own.error?.message ?? "the browser's own target is unknown");
        this.rootBrowser = info.targetId;
      }
      this.opening += 1;
      const reply = await this.command(link, 'Target.attachToBrowserTarget', {}).finally(() => {
        this.opening -= 1;
      });
      const sessionId = reply.result?.sessionId;
      if (typeof sessionId !== 'string') {
        throw new Error(reply.error?.message ?? 'no browser session was given');
      }
      link.browserSession = sessionId;
      this.sessions.set(sessionId, link);
      this.browserSessions.add(sessionId);
      return link;
    } catch (err) {
      this.links.delete(link);
      throw err;
    }
  }

  /** Sends a guest's command (its id kept to answer with). */
  forward(link: GuestLink, clientId: number, message: Message, sessionId: string): void {
    const id = this.takeId();
    const onSession = message.sessionId !== undefined;
    this.pending.set(id, { link, clientId, onSession, method: message.method ?? '' });
    this.send({ id, method: message.method, params: message.params ?? {}, sessionId });
  }

  /** A command of the link's own; resolves with the reply, whatever it says. */
  command(
    link: GuestLink,
    method: string,
    params: Record<string, unknown>,
    sessionId?: string,
  ): Promise<Message> {
    return new Promise((resolve) => {
      if (this.wire.isClosed) {
        resolve({ error: { code: -32000, message: 'the browser is gone' } });
        return;
      }
      const id = this.takeId();
      this.pending.set(id, { link, clientId: null, onSession: false, method, settle: resolve });
      this.send({ id, method, params, sessionId });
    });
  }

  /** Counts a session as the link's (its messages come to it). */
  own(link: GuestLink, sessionId: string): void {
    this.sessions.set(sessionId, link);
  }

  forget(sessionId: string): void {
    this.sessions.delete(sessionId);
  }

  /** Drops a link once it has closed. */
  remove(link: GuestLink): void {
    this.links.delete(link);
    for (const [sessionId, owner] of this.sessions)
      if (owner === link) this.sessions.delete(sessionId);
    for (const [id, p] of this.pending) {
      if (p.link !== link) continue;
      this.pending.delete(id);
      p.settle?.({ error: { code: -32000, message: 'the connection closed' } });
    }
  }

  claim(message: Buffer): boolean {
    if (this.links.size === 0 && this.pending.size === 0) return false;
    const id = leadingId(message);
    if (id !== null && id >= FIRST_ID) {
      const p = this.pending.get(id);
      if (!p) return id < this.nextId;
      this.pending.delete(id);
      const parsed = parseMessage(message);
      if (p.settle) p.settle(parsed);
      else if (p.clientId !== null) p.link.reply(p.clientId, p.onSession, p.method, parsed);
      return true;
    }
    if (id !== null) return false;
    const sessionId = trailingSession(message);
    if (sessionId === null) return this.rootEvent(message);
    const link = this.sessions.get(sessionId);
    if (!link) return false;
    link.event(parseMessage(message));
    return true;
  }

  /**
   * Takes the root connection's news of a guest's browser session, which the worker's puppeteer
   * must not act on (it would take the session for a target of its own and set its
   * auto-attach there): the attach of a browser target that is not the root's own while one
   * is being opened, and the detach of a guest's browser session.
   */
  private rootEvent(message: Buffer): boolean {
    if (this.opening === 0 && this.browserSessions.size === 0) return false;
    const head = message.toString('latin1', 0, 48);
    const attached = head.includes('"method":"Target.attachedToTarget"');
    if (!attached && !head.includes('"method":"Target.detachedFromTarget"')) return false;
    const event = parseMessage(message);
    const sessionId = event.params?.sessionId;
    if (typeof sessionId !== 'string') return false;
    if (!attached) return this.browserSessions.delete(sessionId);
    const info = targetInfoOf(event.params?.targetInfo);
    return this.opening > 0 && info?.type === 'browser' && info.targetId !== this.rootBrowser;
  }

  closed(): void {
    for (const link of [...this.links]) link.ended();
  }

  private takeId(): number {
    if (this.nextId >= LAST_ID) this.nextId = FIRST_ID;
    return this.nextId++;
  }

  private send(message: Message): void {
    this.wire.send(JSON.stringify(message));
  }
}
