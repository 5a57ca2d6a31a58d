import { JsonText } from '../json-text';
import type { Call } from './call';
import { evaluatedStringPair, replyResult, resultString } from '../devtools/wire-commands';
import type { WorldSend } from './isolated-world';
import { evaluateIn, evaluateInWorld, evaluatedValue, inWorld } from './isolated-world';
import type { ManagedPage } from './managed-page';

/** What extract-content answers, the HTML still as the JSON text Chromium sent. */
export interface PageHtml {
  url: string;
  title: string;
  /** The page's HTML as a JSON string literal, ready to go into a reply as it is. */
  content: JsonText;
  /** The HTML's length in UTF-16 units, as `String.length` counts. */
  content_length: number;
}

/**
 * In-page (isolated world): the title, and the document serialised as puppeteer's `content()`
 * does it, the doctype and any comments around the root included. Read in a world of our own,
 * a page's scripts can neither see nor tamper with the read.
 */
function titleAndHtmlInPage(): [string, string] {
  let content = '';
  for (const node of Array.from(document.childNodes)) {
    content +=
      node === document.documentElement
        ? document.documentElement.outerHTML
        : new XMLSerializer().serializeToString(node);
  }
  return [document.title, content];
}

const EXPRESSION = `(${titleAndHtmlInPage.toString()})()`;

interface TitleAndHtml {
  title: string;
  html: JsonText;
  length: number;
}

/**
 * A read whose HTML is at least this long (UTF-16 units) learns its document's node, so that
 * the next read of the same document is serialised by the browser with no script (the bench's
 * `content` section times both reads). A smaller page reads as fast either way.
 */
const LEARN_FROM_LENGTH = 16_384;

/** The document node last learnt per page, for the document (see ManagedPage.document). */
const documentNodes = new WeakMap<ManagedPage, { document: string; backendNodeId: number }>();
/** Pages whose document node is being learnt now. */
const learning = new WeakSet<ManagedPage>();

/**
 * The page's full HTML and title as they are now. The HTML stays the JSON text of Chromium's
 * reply (see WireCommands): it is never decoded into a string and encoded again on its way to
 * the client. A document read before (and large) is serialised by the browser from its node,
 * the title read beside it; any other is read in one command in the page's isolated world.
 */
export async function readPageHtml(mp: ManagedPage, call: Call): Promise<PageHtml> {
  const document = mp.document;
  const known = documentNodes.get(mp);
  if (known && document !== null && known.document === document) {
    const read = await readByNode(mp, call, known.backendNodeId);
    if (read) return done(mp, read);
    // The node is gone (a document replaced before its navigation was seen): read by script.
    documentNodes.delete(mp);
  }
  const send: WorldSend = (command) => mp.cdp(call, command);
  const read = await inWorld(
    mp,
    send,
    async (contextId): Promise<TitleAndHtml> => {
      const params = { expression: EXPRESSION, contextId, returnByValue: true };
      const sent = mp.wire(call, 'Runtime.evaluate', params);
      if (!sent) return parsed(await evaluateIn(send, contextId, EXPRESSION));
      const reply = await sent;
      const pair = evaluatedStringPair(reply);
      if (!pair) {
        // A reply of another shape (an exception, a destroyed world) is read in full.
        return parsed(evaluatedValue(replyResult(reply)));
      }
      if (pair.length >= LEARN_FROM_LENGTH && document !== null && mp.document === document)
        learnDocumentNode(mp, contextId, document);
      return { title: pair.first, html: new JsonText(pair.second), length: pair.length };
    },
    () => !call.signal.aborted,
  );
  return done(mp, read);
}

function done(mp: ManagedPage, read: TitleAndHtml): PageHtml {
  mp.noteTitle(read.title);
  return { url: mp.url, title: read.title, content: read.html, content_length: read.length };
}

/**
 * The document's HTML serialised by the browser from its node (`DOM.getOuterHTML`: the
 * doctype and any comments around the root included, as the script's read gives it), the
 * title read in the isolated world beside it; null when the node is gone or the reply is not
 * the one string the splice reads.
 */
async function readByNode(
  mp: ManagedPage,
  call: Call,
  backendNodeId: number,
): Promise<TitleAndHtml | null> {
  const sent = mp.wire(call, 'DOM.getOuterHTML', { backendNodeId });
  if (!sent) return null;
  const send: WorldSend = (command) => mp.cdp(call, command);
  const [reply, title] = await Promise.all([
    sent,
    evaluateInWorld(mp, send, 'document.title', { mayRetry: () => !call.signal.aborted }),
  ]);
  const html = resultString(reply, 'outerHTML');
  if (!html || typeof title !== 'string') return null;
  return { title, html: new JsonText(html.text), length: html.length };
}

/**
 * Learns the node of the page's document `document` in the background, after the read that
 * answers the call: the object the world hands out is released again at once. A navigation
 * meanwhile leaves nothing learnt; a failure only means the next read goes by script again.
 */
function learnDocumentNode(mp: ManagedPage, contextId: number, document: string): void {
  if (learning.has(mp)) return;
  learning.add(mp);
  const session = mp.session;
  const objectGroup = 'persona-browser-document';
  void (async () => {
    try {
      const res = await session.send('Runtime.evaluate', {
        expression: 'document',
        contextId,
        objectGroup,
      });
      const objectId = res.result.objectId;
      if (objectId === undefined) return;
      const { node } = await session.send('DOM.describeNode', { objectId });
      if (mp.document === document)
        documentNodes.set(mp, { document, backendNodeId: node.backendNodeId });
    } catch {
      // The page navigated or closed meanwhile: nothing to learn.
    } finally {
      learning.delete(mp);
      session.send('Runtime.releaseObjectGroup', { objectGroup }).catch(() => undefined);
    }
  })();
}

function parsed(value: unknown): TitleAndHtml {
  if (!Array.isArray(value) || typeof value[0] !== 'string' || typeof value[1] !== 'string')
    throw new Error('the page HTML read gave no title and HTML');
  return { title: value[0], html: JsonText.of(value[1]), length: value[1].length };
}
