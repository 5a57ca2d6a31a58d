import { isRecord } from '@persona-browser/service-kit';
import type { Message } from './guest-wire';

/**
 * Keeps an outside client's `Runtime.enable` from reaching its pages, and gives the client the
 * execution contexts it would have learnt from it (DEVTOOLS_QUIET_RUNTIME).
 *
 * With Runtime on, V8 serialises what a page hands the console for the client, and a page can
 * see that happen (detector pages pass an Error to `console.debug` and watch its stack being
 * formatted). The worker's own connection never enables Runtime (quiet-transport.ts); a
 * client's does, on each page and frame it attaches. Puppeteer and Playwright enable it for
 * one thing they cannot do without: the ids of each frame's execution contexts (the main world,
 * and the isolated worlds they make), from `Runtime.executionContextCreated`, and their end.
 *
 * So on a client's page and frame sessions `Runtime.enable` is answered here, and the contexts
 * are told as Chromium would tell them, found by commands that leave the page's own script
 * alone: a frame's main world is the world `DOM.resolveNode` resolves the frame's document in
 * (reached through an isolated world of ours); a named isolated world is what
 * `Page.createIsolatedWorld` answers for its name (the client's own, when it makes one, and
 * after each navigation for the names it used). A frame's contexts end with its
 * `Page.frameNavigated` or `Page.frameDetached`: the client must have Page enabled to follow
 * navigations, as both libraries do. What Runtime alone would bring does not come: console
 * messages (`Runtime.consoleAPICalled`), uncaught exceptions (`Runtime.exceptionThrown`).
 * Workers' sessions are left alone.
 */

/** What the contexts are told through: the client's link (guest-link.ts). */
export interface QuietSink {
  /** Runs `work` in turn with everything else the client is sent. */
  later(work: () => void | Promise<void>): void;
  /** Resolves once the answers to the client's earlier commands on the session are queued. */
  afterEarlier(sessionId: string): Promise<void>;
  /** A message to the client; only from inside `later`. */
  send(message: Message): void;
  /** A command of our own on one of the client's sessions; resolves with the reply. */
  command(method: string, params: Record<string, unknown>, sessionId: string): Promise<Message>;
}

/** The isolated world our look-ups reach a frame's document through. */
const LOOKUP_WORLD = '__persona_lookup__';
const LOOKUP_GROUP = 'persona-lookup';

/** One page or frame session of the client's. */
interface Quieted {
  /** The client enabled Runtime (and has not disabled it). */
  enabled: boolean;
  /** Names of the isolated worlds the client uses, with their universal access. */
  worlds: Map<string, boolean>;
  /** The contexts told to the client, by frame. */
  contexts: Map<string, Set<number>>;
}

interface Frame {
  id: string;
  origin: string;
}

export class QuietContexts {
  private readonly sessions = new Map<string, Quieted>();

  constructor(private readonly sink: QuietSink) {}

  /** A page or frame session of the client's: its Runtime is kept from the page from now on. */
  track(sessionId: string): void {
    this.sessions.set(sessionId, { enabled: false, worlds: new Map(), contexts: new Map() });
  }

  forget(sessionId: string): void {
    this.sessions.delete(sessionId);
  }

  /** A command of the client's on `sessionId`; true when it was taken here (and is answered). */
  command(id: number, message: Message, sessionId: string): boolean {
    const quieted = this.sessions.get(sessionId);
    if (!quieted) return false;
    const params = message.params ?? {};
    const worldName = typeof params.worldName === 'string' ? params.worldName : '';
    switch (message.method) {
      case 'Runtime.enable':
        quieted.enabled = true;
        // After the answers to what the client sent before (its Page.getFrameTree: a context
        // of a frame the client does not know yet is dropped), as Chromium orders them.
        void this.sink.afterEarlier(sessionId).then(() =>
          this.sink.later(async () => {
            // Chromium tells the existing contexts before it answers.
            await this.tellAll(sessionId, quieted);
            this.sink.send({ id, result: {}, sessionId });
          }),
        );
        return true;
      case 'Runtime.disable':
        quieted.enabled = false;
        quieted.contexts.clear();
        this.sink.later(() => this.sink.send({ id, result: {}, sessionId }));
        return true;
      case 'Page.addScriptToEvaluateOnNewDocument':
        // A world named here is made in each new document: told after each navigation.
        if (worldName) quieted.worlds.set(worldName, quieted.worlds.get(worldName) ?? false);
        return false;
      case 'Page.createIsolatedWorld': {
        if (worldName) quieted.worlds.set(worldName, params.grantUniveralAccess === true);
        if (!quieted.enabled || typeof params.frameId !== 'string') return false;
        const frame = { id: params.frameId, origin: '' };
        void this.sink.command('Page.createIsolatedWorld', params, sessionId).then((reply) =>
          this.sink.later(() => {
            const contextId = reply.result?.executionContextId;
            if (typeof contextId === 'number') {
              this.tell(sessionId, quieted, frame, contextId, worldName);
            }
            this.sink.send({ ...reply, id, sessionId });
          }),
        );
        return true;
      }
      default:
        return false;
    }
  }

  /** An event on `sessionId`; true when it was taken here (and is sent in turn). */
  event(message: Message, sessionId: string): boolean {
    const quieted = this.sessions.get(sessionId);
    if (!quieted?.enabled) return false;
    if (message.method === 'Page.frameNavigated') {
      const frame = frameOf(message.params?.frame);
      if (!frame) return false;
      this.sink.later(async () => {
        this.end(sessionId, quieted, frame.id);
        this.sink.send(message);
        await this.tellFrame(sessionId, quieted, frame);
      });
      return true;
    }
    if (message.method === 'Page.frameDetached') {
      const frameId = message.params?.frameId;
      if (typeof frameId !== 'string') return false;
      this.sink.later(() => {
        this.end(sessionId, quieted, frameId);
        this.sink.send(message);
      });
      return true;
    }
    return false;
  }

  /** Tells the contexts of every frame of the session's target. */
  private async tellAll(sessionId: string, quieted: Quieted): Promise<void> {
    const reply = await this.sink.command('Page.getFrameTree', {}, sessionId);
    const frames: Frame[] = [];
    const walk = (tree: unknown): void => {
      if (!isRecord(tree)) return;
      const frame = frameOf(tree.frame);
      if (frame) frames.push(frame);
      if (Array.isArray(tree.childFrames)) for (const child of tree.childFrames) walk(child);
    };
    walk(reply.result?.frameTree);
    await Promise.all(frames.map((frame) => this.tellFrame(sessionId, quieted, frame)));
  }

  /** Finds a frame's main world and the client's named worlds in it, and tells them. */
  private async tellFrame(sessionId: string, quieted: Quieted, frame: Frame): Promise<void> {
    const named = [...quieted.worlds].map(async ([worldName, grantUniveralAccess]) => {
      const reply = await this.sink.command(
        'Page.createIsolatedWorld',
        { frameId: frame.id, worldName, grantUniveralAccess },
        sessionId,
      );
      const contextId = reply.result?.executionContextId;
      return { worldName, contextId: typeof contextId === 'number' ? contextId : null };
    });
    const [main, ...worlds] = await Promise.all([this.mainWorld(sessionId, frame.id), ...named]);
    if (!this.sessions.has(sessionId) || !quieted.enabled) return;
    if (main !== null) this.tell(sessionId, quieted, frame, main, '');
    for (const w of worlds) {
      if (w.contextId !== null) this.tell(sessionId, quieted, frame, w.contextId, w.worldName);
    }
  }

  /**
   * The id of a frame's main-world context, or null. The frame's document is reached from an
   * isolated world of ours, and resolved again without a context named, which Chromium does in
   * the main world of the document's frame. Should the id not read from the handle, the
   * isolated world is told as the main one: evaluation then still works, without the page's
   * own globals.
   */
  private async mainWorld(sessionId: string, frameId: string): Promise<number | null> {
    const send = (method: string, params: Record<string, unknown>): Promise<Message> =>
      this.sink.command(method, params, sessionId);
    const world = await send('Page.createIsolatedWorld', {
      frameId,
      worldName: LOOKUP_WORLD,
      grantUniveralAccess: false,
    });
    const isolated = world.result?.executionContextId;
    if (typeof isolated !== 'number') return null;
    try {
      const doc = await send('Runtime.evaluate', {
        expression: 'document',
        contextId: isolated,
        objectGroup: LOOKUP_GROUP,
      });
      const node = await send('DOM.describeNode', { objectId: objectIdOf(doc.result?.result) });
      const backendNodeId = isRecord(node.result?.node) ? node.result.node.backendNodeId : null;
      const main = await send('DOM.resolveNode', { backendNodeId, objectGroup: LOOKUP_GROUP });
      return contextOfObjectId(objectIdOf(main.result?.object)) ?? isolated;
    } finally {
      void send('Runtime.releaseObjectGroup', { objectGroup: LOOKUP_GROUP });
    }
  }

  /** Tells the client of a context, once. */
  private tell(
    sessionId: string,
    quieted: Quieted,
    frame: Frame,
    contextId: number,
    name: string,
  ): void {
    const known = quieted.contexts.get(frame.id) ?? new Set<number>();
    if (known.has(contextId)) return;
    known.add(contextId);
    quieted.contexts.set(frame.id, known);
    const isDefault = name === '';
    this.sink.send({
      method: 'Runtime.executionContextCreated',
      params: {
        context: {
          id: contextId,
          origin: frame.origin,
          name,
          uniqueId: `${sessionId}.${contextId}`,
          auxData: { isDefault, type: isDefault ? 'default' : 'isolated', frameId: frame.id },
        },
      },
      sessionId,
    });
  }

  /** Tells the client that a frame's contexts are gone. */
  private end(sessionId: string, quieted: Quieted, frameId: string): void {
    const known = quieted.contexts.get(frameId);
    if (!known) return;
    quieted.contexts.delete(frameId);
    for (const executionContextId of known) {
      this.sink.send({
        method: 'Runtime.executionContextDestroyed',
        params: {
          executionContextId,
          executionContextUniqueId: `${sessionId}.${executionContextId}`,
        },
        sessionId,
      });
    }
  }
}

function frameOf(value: unknown): Frame | null {
  if (!isRecord(value) || typeof value.id !== 'string') return null;
  return {
    id: value.id,
    origin: typeof value.securityOrigin === 'string' ? value.securityOrigin : '',
  };
}

function objectIdOf(remote: unknown): string | null {
  return isRecord(remote) && typeof remote.objectId === 'string' ? remote.objectId : null;
}

/**
 * The execution context a remote object lives in, read from its id. V8 writes an object id as
 * `<isolate>.<context>.<object>`: not a documented format, so a V8 that writes another reads
 * as null here (and the main world falls back to an isolated one); the stealth test's
 * main-world reads fail loudly then.
 */
export function contextOfObjectId(objectId: string | null): number | null {
  const match = objectId === null ? null : /^-?\d+\.(\d+)\.\d+$/.exec(objectId);
  const id = match?.[1] === undefined ? NaN : Number(match[1]);
  return Number.isSafeInteger(id) && id > 0 ? id : null;
}
