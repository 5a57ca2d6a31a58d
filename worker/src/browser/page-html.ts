import { JsonText } from '../json-text';
import type { Call } from './call';
import { evaluatedStringPair, replyResult } from './cdp/wire-commands';
import type { WorldSend } from './isolated-world';
import { evaluateIn, evaluatedValue, inWorld } from './isolated-world';
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
 * The page's full HTML and title as they are now, in one command in the page's isolated world.
 * The HTML stays the JSON text of Chromium's reply (see WireCommands): it is never decoded into
 * a string and encoded again on its way to the client.
 */
export async function readPageHtml(mp: ManagedPage, call: Call): Promise<PageHtml> {
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
      if (pair) return { title: pair.first, html: new JsonText(pair.second), length: pair.length };
      // A reply of another shape (an exception, a destroyed world) is read in full.
      return parsed(evaluatedValue(replyResult(reply)));
    },
    () => !call.signal.aborted,
  );
  mp.noteTitle(read.title);
  return { url: mp.url, title: read.title, content: read.html, content_length: read.length };
}

function parsed(value: unknown): TitleAndHtml {
  if (!Array.isArray(value) || typeof value[0] !== 'string' || typeof value[1] !== 'string')
    throw new Error('the page HTML read gave no title and HTML');
  return { title: value[0], html: JsonText.of(value[1]), length: value[1].length };
}
