import { isRecord } from '@persona-browser/service-kit';
import type { GuestPolicy } from './guest-policy';
import { NAMES_TARGET, REFUSED } from './guest-policy';
import type { Message, TargetInfo } from './guest-wire';
import { errorReply, targetInfoOf } from './guest-wire';
import { QuietContexts } from './quiet-contexts';

/** How long a tab may take to name the page it holds. */
const PROBE_MS = 2_000;

/** What a guest's link needs of the mux that carries it (guest-mux.ts). */
export interface GuestHost {
  /** Sends a guest's command, its id kept to answer with. */
  forward(link: GuestLink, clientId: number, message: Message, sessionId: string): void;
  /** A command of the link's own; resolves with the reply, whatever it says. */
  command(
    link: GuestLink,
    method: string,
    params: Record<string, unknown>,
    sessionId?: string,
  ): Promise<Message>;
  /** Counts a session as the link's (its messages come to it). */
  own(link: GuestLink, sessionId: string): void;
  forget(sessionId: string): void;
  /** Drops a link once it has closed. */
  remove(link: GuestLink): void;
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
  /** The guest's commands forwarded on each of its sessions and not answered yet, by id. */
  private readonly unanswered = new Map<string, Set<number>>();
  /** Who waits for some of those answers: `ids` left, `done` when none is. */
  private answerWaiters: { sessionId: string; ids: Set<number>; done: () => void }[] = [];
  /** Its pages' and frames' Runtime, kept from them (null: passed through as it is sent). */
  private readonly quiet: QuietContexts | null;

  constructor(
    private readonly mux: GuestHost,
    private readonly policy: GuestPolicy,
  ) {
    this.quiet = policy.quietRuntime
      ? new QuietContexts({
          later: (work) => this.later(work),
          afterEarlier: (sessionId) => this.afterEarlier(sessionId),
          send: (message) => this.send(message),
          command: (method, params, sessionId) => this.mux.command(this, method, params, sessionId),
        })
      : null;
  }

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
    if (this.quiet?.command(id, message, sessionId)) return;
    const ids = this.unanswered.get(sessionId) ?? new Set<number>();
    ids.add(id);
    this.unanswered.set(sessionId, ids);
    this.mux.forward(this, id, message, sessionId);
  }

  /**
   * Resolves once every command the guest sent on the session so far has its answer in the
   * queue to the guest: an answer made here then goes after them, as Chromium would send it.
   */
  private afterEarlier(sessionId: string): Promise<void> {
    const ids = new Set(this.unanswered.get(sessionId));
    if (ids.size === 0) return Promise.resolve();
    return new Promise((done) => this.answerWaiters.push({ sessionId, ids, done }));
  }

  /** Once an answer on a session is queued, who waited for it goes on (and queues after it). */
  private answeredOn(onSession: boolean, message: Message, clientId: number): void {
    if (onSession && message.sessionId !== undefined) this.answered(message.sessionId, clientId);
  }

  /** A command on the session got its answer: whoever waited for it alone goes on. */
  private answered(sessionId: string, id: number): void {
    this.unanswered.get(sessionId)?.delete(id);
    this.answerWaiters = this.answerWaiters.filter((w) => {
      if (w.sessionId === sessionId) w.ids.delete(id);
      if (w.ids.size > 0) return true;
      w.done();
      return false;
    });
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
      this.answeredOn(onSession, message, clientId);
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
    this.answeredOn(onSession, message, clientId);
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
    // A page's navigations end the contexts told to the guest in place of Runtime's.
    if (!atBrowser && this.quiet?.event(message, sessionId)) return;
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
          this.quiet?.forget(child);
          this.unanswered.delete(child);
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

  /**
   * Gives a page or frame session the persona's identity before the guest can run it, and
   * keeps its Runtime quiet when the option is on.
   */
  private async setUp(sessionId: string, info: TargetInfo): Promise<void> {
    if (info.type !== 'page' && info.type !== 'iframe') return;
    // Before the guest can send its Runtime.enable there.
    this.quiet?.track(sessionId);
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
