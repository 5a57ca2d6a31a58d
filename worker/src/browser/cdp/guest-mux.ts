import { isRecord } from '@persona-browser/service-kit';
import type { GuestTap, WireCommands } from './wire-commands';

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

/** A guest's view of the pool: the page it may have besides its own, by target id. */
export interface GuestPolicy {
  /** Whether the guest may have `targetId`, a target it did not create, right now. */
  holds(targetId: string): boolean;
  /**
   * A use of `targetId`, a target the guest did not create, by a command: null when the guest
   * holds it (the hold is renewed: a lease lasts from its last use), else the reason it reads.
   */
  use(targetId: string): string | null;
  /**
   * Sent on each page and frame session the guest attaches, before the guest hears of it (the
   * target waits for its debugger until then): what makes its pages tell the persona's identity.
   */
  pageSetup: GuestCommand[];
}

/** A command the mux sends on a guest's session for it. */
export interface GuestCommand {
  method: string;
  params: Record<string, unknown>;
}

/** A DevTools message as it travels: a command, a reply or an event. */
interface Message {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
  sessionId?: string;
}

interface TargetInfo {
  targetId: string;
  type?: string;
  openerId?: string;
  parentFrameId?: string;
}

/** Ids of guests' commands: above the worker's own ranges, inside Chromium's 32-bit range. */
const FIRST_ID = 1_900_000_000;
const LAST_ID = 2_147_000_000;
const SESSION_KEY = Buffer.from('"sessionId":"');
/** Chromium's session ids are 32 hex digits; the key, the id and `"}` fit in this tail. */
const SESSION_TAIL = 64;
/** How long a tab may take to name the page it holds. */
const PROBE_MS = 2_000;

/** Browser-level commands that name a target in `params.targetId`. */
const NAMES_TARGET = new Set([
  'Target.attachToTarget',
  'Target.closeTarget',
  'Target.activateTarget',
  'Target.exposeDevToolsProtocol',
  'Target.getTargetInfo',
]);
/** Browser-level commands a guest may not send at all, with the reason it reads. */
const REFUSED: Record<string, string> = {
  'Browser.close': "the persona's browser is closed by its worker only",
  'Browser.crash': "the persona's browser is closed by its worker only",
  'Browser.crashGpuProcess': "the persona's browser is closed by its worker only",
  'Target.attachToBrowserTarget': 'a connection has one browser session',
  'Target.sendMessageToTarget': 'only flattened sessions are served (flatten: true)',
  'Target.setRemoteLocations': 'not served',
};

/** A protocol error the way Chromium words one (code -32000: server error). */
const errorReply = (id: number, message: string, sessionId?: string): Message => ({
  id,
  error: { code: -32000, message },
  ...(sessionId === undefined ? {} : { sessionId }),
});

function targetInfoOf(value: unknown): TargetInfo | null {
  if (!isRecord(value) || typeof value.targetId !== 'string') return null;
  const text = (key: string): string | undefined =>
    typeof value[key] === 'string' ? value[key] : undefined;
  return {
    targetId: value.targetId,
    type: text('type'),
    openerId: text('openerId'),
    parentFrameId: text('parentFrameId'),
  };
}

/** The session id at the end of a message as Chromium writes it, or null: no parse. */
function trailingSession(message: Buffer): string | null {
  // Only the tail is searched: the worker's own large replies pass here too.
  const from = Math.max(0, message.length - SESSION_TAIL);
  const found = message.subarray(from).lastIndexOf(SESSION_KEY);
  if (found < 0) return null;
  const at = from + found;
  const start = at + SESSION_KEY.length;
  const end = message.indexOf(34 /* " */, start);
  // The message's own session closes it (`…"sessionId":"ID"}`): not one named in its params.
  if (end < 0 || end + 2 !== message.length) return null;
  return message.toString('latin1', start, end);
}

/** The id a reply opens with (`{"id":123,`), or null. */
function leadingId(message: Buffer): number | null {
  if (message.toString('latin1', 0, 6) !== '{"id":') return null;
  const id = Number.parseInt(message.toString('latin1', 6, 18), 10);
  return Number.isInteger(id) ? id : null;
}

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
export class GuestMux implements GuestTap {
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
      const parsed = parse(message);
      if (p.settle) p.settle(parsed);
      else if (p.clientId !== null) p.link.reply(p.clientId, p.onSession, p.method, parsed);
      return true;
    }
    if (id !== null) return false;
    const sessionId = trailingSession(message);
    if (sessionId === null) return this.rootEvent(message);
    const link = this.sessions.get(sessionId);
    if (!link) return false;
    link.event(parse(message));
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
    const event = parse(message);
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

function parse(message: Buffer): Message {
  const value: unknown = JSON.parse(message.toString('utf8'));
  return isRecord(value) ? value : {};
}

/** One guest: what it may see, and its messages both ways. */
export class GuestLink {
  /** Messages to the guest, as text. */
  onmessage: ((text: string) => void) | null = null;
  /** The browser went, or the link was closed. */
  onclose: (() => void) | null = null;
  browserSession = '';
  /** Targets the guest created, or pages they opened: closed when it goes. */
  private readonly mine = new Set<string>();
  /** Its attached sessions and the target each is on. */
  private readonly attached = new Map<string, string>();
  /** Sessions of targets it may not have, detached before it could see them. */
  private readonly undone = new Set<string>();
  /** Targets the guest was told of (their end is told too). */
  private readonly announced = new Set<string>();
  /** Browser targets (one per browser connection): seen in discovery, attachable. */
  private readonly browsers = new Set<string>();
  /** Its sessions on browser targets: browser-level, filtered as its own connection is. */
  private readonly browserSessions = new Set<string>();
  /** Tab targets it may have (each holds a page it may have). */
  private readonly tabs = new Set<string>();
  /** Tab sessions being looked into: the page each holds, once the browser names it. */
  private readonly probes = new Map<
    string,
    (page: { info: TargetInfo; sessionId: string }) => void
  >();
  /** Its `Target.createTarget` commands not answered yet: what it is sent waits until then. */
  private creating = 0;
  private createdWaiters: (() => void)[] = [];
  /** What goes to the guest, in the order it came. */
  private queue: Promise<void> = Promise.resolve();
  private open = true;

  constructor(
    private readonly mux: GuestMux,
    private readonly policy: GuestPolicy,
  ) {}

  /** The targets it created and has not closed. */
  get created(): string[] {
    return [...this.mine];
  }

  /** A message from the guest. */
  fromClient(text: string): void {
    if (!this.open) return;
    let message: Message;
    try {
      const value: unknown = JSON.parse(text);
      if (!isRecord(value)) throw new Error('not an object');
      message = value;
    } catch {
      return this.send({ error: { code: -32700, message: 'Message must be a JSON object' } });
    }
    const { id, method, sessionId } = message;
    if (typeof id !== 'number' || typeof method !== 'string') {
      return this.send({
        ...(typeof id === 'number' ? { id } : {}),
        error: { code: -32600, message: 'Message must have an integer id and a method' },
      });
    }
    // A session on a browser target is a browser connection too: the same rules hold on it.
    const atBrowser = sessionId === undefined || this.browserSessions.has(sessionId);
    if (!atBrowser) return this.onSession(id, message, sessionId);
    const refused = REFUSED[method];
    if (refused) {
      return this.send(errorReply(id, `${method} is not allowed: ${refused}`, sessionId));
    }
    if (NAMES_TARGET.has(method)) {
      const targetId = message.params?.targetId;
      if (typeof targetId === 'string') {
        const why = this.refusal(targetId);
        if (why) return this.send(errorReply(id, why, sessionId));
      }
    }
    if (method === 'Target.createTarget') this.creating += 1;
    this.mux.forward(this, id, message, sessionId ?? this.browserSession);
  }

  private onSession(id: number, message: Message, sessionId: string): void {
    const targetId = this.attached.get(sessionId);
    if (targetId === undefined) {
      return this.send(errorReply(id, 'Session with given id not found.', sessionId));
    }
    const why = this.refusal(targetId);
    if (why) return this.send(errorReply(id, why, sessionId));
    this.mux.forward(this, id, message, sessionId);
  }

  /** Null when the guest may drive `targetId`, else why not. */
  private refusal(targetId: string): string | null {
    if (this.mine.has(targetId) || this.tabs.has(targetId) || this.browsers.has(targetId)) {
      return null;
    }
    return this.policy.use(targetId);
  }

  /** Whether the guest may know of a target now (nothing is renewed by looking). */
  private visible(info: TargetInfo): boolean {
    // The browser itself (each browser session is one): clients look for it; it has no page.
    if (info.type === 'browser') {
      this.browsers.add(info.targetId);
      return true;
    }
    if (this.mine.has(info.targetId) || this.tabs.has(info.targetId)) return true;
    if (info.openerId !== undefined && this.mine.has(info.openerId)) {
      this.mine.add(info.targetId);
      return true;
    }
    if (info.parentFrameId !== undefined && this.mine.has(info.parentFrameId)) return true;
    return this.policy.holds(info.targetId);
  }

  /** Tells the guest of a target (and remembers it did, for the target's end). */
  private announce(info: TargetInfo, message: Message): void {
    if (!this.visible(info)) return;
    this.announced.add(info.targetId);
    this.send(message);
  }

  /** The reply to one of the guest's commands. */
  reply(clientId: number, onSession: boolean, method: string, message: Message): void {
    const out: Message = { ...message, id: clientId };
    if (!onSession) delete out.sessionId;
    if (method === 'Target.createTarget') {
      const targetId = message.result?.targetId;
      if (typeof targetId === 'string') this.mine.add(targetId);
      this.creating = Math.max(0, this.creating - 1);
      if (this.creating === 0) for (const wake of this.createdWaiters.splice(0)) wake();
      // After what came before it (the new target's attach, which clients expect first).
      this.later(() => this.send(out));
      return;
    }
    if (method === 'Target.getTargets' && Array.isArray(message.result?.targetInfos)) {
      const infos: unknown[] = message.result.targetInfos;
      out.result = {
        ...message.result,
        targetInfos: infos.filter((i) => {
          const info = targetInfoOf(i);
          return info !== null && this.visible(info);
        }),
      };
    }
    this.later(() => this.send(out));
  }

  /** An event on one of the guest's sessions. */
  event(message: Message): void {
    const { sessionId } = message;
    if (sessionId === undefined) return;
    if (this.undone.has(sessionId)) return;
    const probe = this.probes.get(sessionId);
    if (probe) {
      // The page a tab holds, attached by the look into it: never the guest's to see.
      const page = targetInfoOf(message.params?.targetInfo);
      const child = message.params?.sessionId;
      if (message.method === 'Target.attachedToTarget' && page && typeof child === 'string') {
        this.mux.own(this, child);
        this.undone.add(child);
        this.probes.delete(sessionId);
        probe({ info: page, sessionId: child });
      }
      return;
    }
    const atBrowser = sessionId === this.browserSession || this.browserSessions.has(sessionId);
    const out: Message = { ...message };
    if (sessionId === this.browserSession) delete out.sessionId;
    switch (message.method) {
      case 'Target.targetCreated':
      case 'Target.targetInfoChanged': {
        const info = targetInfoOf(message.params?.targetInfo);
        if (!atBrowser || info === null) break;
        // Whether a new target is the guest's own is known once its createTarget is answered.
        return this.later(() => this.announce(info, out));
      }
      case 'Target.targetDestroyed': {
        const targetId = message.params?.targetId;
        if (!atBrowser || typeof targetId !== 'string') break;
        return this.later(() => {
          this.mine.delete(targetId);
          if (this.announced.delete(targetId)) this.send(out);
        });
      }
      case 'Target.attachedToTarget': {
        const child = message.params?.sessionId;
        const info = targetInfoOf(message.params?.targetInfo);
        if (typeof child !== 'string' || info === null) break;
        // Its messages come here from now on, whoever may see them.
        this.mux.own(this, child);
        // Under one of its own sessions (a page in its tab, a frame, a worker): the guest's.
        if (!atBrowser) {
          this.attached.set(child, this.attached.get(sessionId) ?? info.targetId);
          return this.later(async () => {
            await this.setUp(child, info);
            if (!this.undone.has(sessionId)) this.send(out);
          });
        }
        const waiting = message.params?.waitingForDebugger === true;
        // A tab is the guest's when the page in it is: looked into before it is told.
        if (info.type === 'tab') {
          return this.later(async () => {
            // The page's own info: a popup of the guest's page names its opener there.
            const page = await this.pageInTab(child);
            if (page !== null && this.visible(page)) {
              this.tabs.add(info.targetId);
              this.attached.set(child, page.targetId);
              this.send(out);
            } else {
              this.undo(child, waiting);
            }
          });
        }
        return this.later(async () => {
          if (this.visible(info)) {
            this.attached.set(child, info.targetId);
            if (info.type === 'browser') this.browserSessions.add(child);
            await this.setUp(child, info);
            this.send(out);
          } else {
            this.undo(child, waiting);
          }
        });
      }
      case 'Target.detachedFromTarget': {
        const child = message.params?.sessionId;
        if (typeof child !== 'string') break;
        return this.later(() => {
          this.attached.delete(child);
          this.browserSessions.delete(child);
          this.mux.forget(child);
          // One it was detached from before it knew of it stays unknown.
          if (!this.undone.delete(child)) this.send(out);
        });
      }
      default:
        break;
    }
    // A session undone meanwhile says nothing more.
    this.later(() => {
      if (!this.undone.has(sessionId)) this.send(out);
    });
  }

  /** Detaches the guest from a target it may not have, letting the target run. */
  private undo(sessionId: string, waiting: boolean): void {
    this.undone.add(sessionId);
    if (waiting) void this.mux.command(this, 'Runtime.runIfWaitingForDebugger', {}, sessionId);
    void this.mux.command(this, 'Target.detachFromTarget', { sessionId }, this.browserSession);
  }

  /**
   * The page target a tab holds: the tab session is asked to attach its children (without
   * holding them), the page's session is noted and let go, and the tab's own auto-attach is
   * turned off again, so that the guest's own asking attaches the page afresh. Null when no
   * page shows within a moment.
   */
  private async pageInTab(tabSession: string): Promise<TargetInfo | null> {
    const named = new Promise<{ info: TargetInfo; sessionId: string } | null>((resolve) => {
      this.probes.set(tabSession, resolve);
      setTimeout(() => resolve(null), PROBE_MS).unref();
    });
    const asked = this.mux.command(
      this,
      'Target.setAutoAttach',
      { autoAttach: true, waitForDebuggerOnStart: false, flatten: true },
      tabSession,
    );
    const page = await named;
    this.probes.delete(tabSession);
    await asked;
    await this.mux.command(
      this,
      'Target.setAutoAttach',
      { autoAttach: false, waitForDebuggerOnStart: false, flatten: true },
      tabSession,
    );
    if (page) {
      await this.mux.command(
        this,
        'Target.detachFromTarget',
        { sessionId: page.sessionId },
        tabSession,
      );
    }
    return page?.info ?? null;
  }

  /** Gives a page or frame session the persona's identity before the guest can run it. */
  private async setUp(sessionId: string, info: TargetInfo): Promise<void> {
    if (info.type !== 'page' && info.type !== 'iframe') return;
    await Promise.all(
      this.policy.pageSetup.map((c) => this.mux.command(this, c.method, c.params, sessionId)),
    );
  }

  /** Runs `work` in turn, once the guest's pending createTarget commands are answered. */
  private later(work: () => void | Promise<void>): void {
    this.queue = this.queue
      .then(async () => {
        while (this.creating > 0) {
          await new Promise<void>((resolve) => this.createdWaiters.push(resolve));
        }
        if (this.open) await work();
      })
      .catch(() => undefined);
  }

  private send(message: Message): void {
    if (this.open) this.onmessage?.(JSON.stringify(message));
  }

  /** Closes the targets it created and its browser session. */
  async close(): Promise<void> {
    if (!this.open) return;
    this.open = false;
    const targets = [...this.mine];
    await Promise.all(
      targets.map((targetId) => this.mux.command(this, 'Target.closeTarget', { targetId })),
    );
    if (this.browserSession) {
      await this.mux.command(this, 'Target.detachFromTarget', { sessionId: this.browserSession });
    }
    this.mux.remove(this);
    this.onclose?.();
  }

  /** The browser went: nothing to close. */
  ended(): void {
    if (!this.open) return;
    this.open = false;
    this.mux.remove(this);
    this.onclose?.();
  }
}
