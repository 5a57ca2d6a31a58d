import { isRecord } from '@persona-browser/service-kit';
import type { Json, RestReply } from './rest';
import { failed, fromReply, htmlToText, textResult, toolError } from './results';
import type { ToolContext, ToolDef } from './tool';
import { ArgumentError, onPage, optionalString, stringArg } from './tool';

const enc = encodeURIComponent;
const ops = (pageId: string, action: string): string => `/api/v1/ops/${enc(pageId)}/${action}`;
const prim = (pageId: string, action: string): string =>
  `/api/v1/primitive/${enc(pageId)}/${action}`;

const PAGE_ID = { type: 'string', description: 'the page, as list_pages or create_page named it' };
const REF = {
  type: 'string',
  description: 'an element reference from snapshot, like n42 (or give selector)',
};
const SELECTOR = { type: 'string', description: 'a CSS selector (or give ref)' };

/** `{ref}` or `{selector}` from the arguments; null when neither was given. */
function elementOf(args: Json): Json | null {
  const ref = optionalString(args, 'ref');
  const selector = optionalString(args, 'selector');
  if (ref !== undefined && selector !== undefined)
    throw new ArgumentError("give either 'ref' or 'selector', not both");
  if (ref !== undefined) return { ref };
  if (selector !== undefined) return { selector };
  return null;
}
function requireElement(args: Json): Json {
  const el = elementOf(args);
  if (!el) throw new ArgumentError("'ref' (from snapshot) or 'selector' is required");
  return el;
}

/**
 * Brings the element on screen as a person would, with the wheel, when it is not wholly there:
 * its centre to the middle of the viewport. A failed check is returned (its message is the
 * answer); an element not found is left to the gesture, whose error names it.
 */
async function bringIntoView(
  ctx: ToolContext,
  pageId: string,
  el: Json,
): Promise<RestReply | null> {
  const seen = await onPage(ctx, pageId, 'POST', prim(pageId, 'check-visible'), { body: el });
  if (failed(seen)) return seen;
  const { found, fully_visible: whole, bounding_box: box, viewport } = seen.body;
  if (found !== true || whole === true || !isBox(box) || !isBox(viewport)) return null;
  const distance = Math.round(box.y + box.height / 2 - viewport.height / 2);
  if (Math.abs(distance) < 2) return null;
  const scrolled = await onPage(ctx, pageId, 'POST', prim(pageId, 'scroll-page'), {
    body: { distance },
  });
  return failed(scrolled) ? scrolled : null;
}
interface BoxLike {
  y: number;
  height: number;
}
const isBox = (v: unknown): v is BoxLike =>
  isRecord(v) && typeof v.height === 'number' && (v.y === undefined || typeof v.y === 'number');

/** Aims at the element (scrolling it into view first) and runs `gesture` on it. */
async function onElement(
  ctx: ToolContext,
  args: Json,
  action: 'click-element' | 'hover-element',
): Promise<RestReply> {
  const pageId = stringArg(args, 'page_id');
  const el = requireElement(args);
  const scrolled = await bringIntoView(ctx, pageId, el);
  if (scrolled) return scrolled;
  return onPage(ctx, pageId, 'POST', prim(pageId, action), { body: el });
}

const page = (extra: Json = {}, required: string[] = []): ToolDef['inputSchema'] => ({
  type: 'object',
  properties: { page_id: PAGE_ID, ...extra },
  required: ['page_id', ...required],
});

/** The tools every persona has; plugin tools are added from its OpenAPI document. */
export const CORE_TOOLS: ToolDef[] = [
  {
    name: 'list_pages',
    description:
      "The persona's pages: id, URL, state, whether leased. Pages this session created are leased to it.",
    inputSchema: { type: 'object', properties: {} },
    run: async (_args, ctx) =>
      fromReply(await ctx.target.call({ method: 'GET', path: '/api/v1/system/status/pages' })),
  },
  {
    name: 'create_page',
    description:
      'Opens a new page (tab) in the persona and leases it to this session: other clients get 423 ' +
      'until the session ends or releases it. At most 5 pages per persona.',
    inputSchema: {
      type: 'object',
      properties: { page_id: { type: 'string', description: 'an id to give it (optional)' } },
    },
    run: async (args, ctx) => {
      const pageId = optionalString(args, 'page_id');
      const made = await ctx.target.call({
        method: 'POST',
        path: '/api/v1/ops/create-page',
        body: pageId === undefined ? {} : { page_id: pageId },
      });
      if (failed(made)) return fromReply(made);
      const id = String(made.body.page_id);
      const leased = await ctx.leases.acquire(ctx.target, id);
      if (failed(leased)) return fromReply(leased);
      return fromReply(made, (b) => ({ ...b, leased_to_this_session: true }));
    },
  },
  {
    name: 'destroy_page',
    description: 'Closes a page. Refused (423) when another client holds its lease.',
    inputSchema: page(),
    run: async (args, ctx) => {
      const pageId = stringArg(args, 'page_id');
      const r = await onPage(ctx, pageId, 'POST', ops(pageId, 'destroy-page'));
      if (!failed(r)) ctx.leases.forget(ctx.target, pageId);
      return fromReply(r);
    },
  },
  {
    name: 'lease_page',
    description:
      'Leases an existing page to this session (renewed while the session lives, released when it ends).',
    inputSchema: page(),
    run: async (args, ctx) =>
      fromReply(await ctx.leases.acquire(ctx.target, stringArg(args, 'page_id'))),
  },
  {
    name: 'release_page',
    description: "Gives this session's lease on a page back.",
    inputSchema: page(),
    run: async (args, ctx) => {
      const r = await ctx.leases.release(ctx.target, stringArg(args, 'page_id'));
      return r ? fromReply(r) : toolError('This session holds no lease on that page');
    },
  },
  {
    name: 'navigate',
    description: 'Goes to a URL (waits for DOM content loaded; a person pauses about 2 s first).',
    inputSchema: page({ url: { type: 'string', description: 'http(s), data: or about:blank' } }, [
      'url',
    ]),
    run: async (args, ctx) => {
      const pageId = stringArg(args, 'page_id');
      const url = stringArg(args, 'url');
      return fromReply(
        await onPage(ctx, pageId, 'POST', ops(pageId, 'navigate'), { body: { url } }),
      );
    },
  },
  {
    name: 'snapshot',
    description:
      'The page as an accessibility tree, one element per line with a ref (like [ref=n42]) that ' +
      'click, hover, type, paste and scroll take. Read by the browser: nothing runs in the page. ' +
      'Refs stay valid until the page navigates.',
    inputSchema: page(),
    run: async (args, ctx) => {
      const pageId = stringArg(args, 'page_id');
      const r = await onPage(ctx, pageId, 'GET', ops(pageId, 'snapshot'));
      if (failed(r)) return fromReply(r);
      const { url, title, snapshot, truncated } = r.body;
      const head = `Page ${pageId}: ${String(title)} (${String(url)})${truncated ? ' [truncated]' : ''}`;
      return textResult(`${head}\n${String(snapshot)}`);
    },
  },
  {
    name: 'click',
    description:
      'Moves the mouse along a curved path to the element and clicks it, as a person does ' +
      '(the wheel brings it on screen first).',
    inputSchema: page({ ref: REF, selector: SELECTOR }),
    run: async (args, ctx) => fromReply(await onElement(ctx, args, 'click-element')),
  },
  {
    name: 'hover',
    description: 'Moves the mouse onto the element without clicking.',
    inputSchema: page({ ref: REF, selector: SELECTOR }),
    run: async (args, ctx) => fromReply(await onElement(ctx, args, 'hover-element')),
  },
  {
    name: 'type',
    description:
      'Types text key by key with a human rhythm (and corrected typos) into the focused element, ' +
      'or into the element given, which is clicked first. submit presses Enter after.',
    inputSchema: page(
      {
        text: { type: 'string' },
        ref: REF,
        selector: SELECTOR,
        submit: { type: 'boolean', description: 'press Enter after typing' },
      },
      ['text'],
    ),
    run: async (args, ctx) => {
      const pageId = stringArg(args, 'page_id');
      if (typeof args.text !== 'string') throw new ArgumentError("'text' is required (a string)");
      if (elementOf(args)) {
        const clicked = await onElement(ctx, args, 'click-element');
        if (failed(clicked)) return fromReply(clicked);
      }
      const typed = await onPage(ctx, pageId, 'POST', prim(pageId, 'type-text'), {
        body: { text: args.text },
      });
      if (failed(typed) || args.submit !== true) return fromReply(typed);
      const entered = await onPage(ctx, pageId, 'POST', prim(pageId, 'press-enter'));
      return fromReply(entered, (b) => ({ ...typed.body, submitted: b.key === 'Enter' }));
    },
  },
  {
    name: 'paste',
    description:
      'Pastes text as a person does (clipboard and the paste shortcut) into the focused element, ' +
      'or into the element given, which is clicked first.',
    inputSchema: page({ text: { type: 'string' }, ref: REF, selector: SELECTOR }, ['text']),
    run: async (args, ctx) => {
      const pageId = stringArg(args, 'page_id');
      if (typeof args.text !== 'string') throw new ArgumentError("'text' is required (a string)");
      if (elementOf(args)) {
        const clicked = await onElement(ctx, args, 'click-element');
        if (failed(clicked)) return fromReply(clicked);
      }
      return fromReply(
        await onPage(ctx, pageId, 'POST', prim(pageId, 'paste-text'), {
          body: { text: args.text },
        }),
      );
    },
  },
  {
    name: 'press_key',
    description: 'Presses a key: Enter, Tab or Shift+Tab.',
    inputSchema: page({ key: { type: 'string', enum: ['Enter', 'Tab', 'Shift+Tab'] } }, ['key']),
    run: async (args, ctx) => {
      const pageId = stringArg(args, 'page_id');
      const key = stringArg(args, 'key');
      if (key === 'Enter')
        return fromReply(await onPage(ctx, pageId, 'POST', prim(pageId, 'press-enter')));
      if (key === 'Tab' || key === 'Shift+Tab') {
        return fromReply(
          await onPage(ctx, pageId, 'POST', prim(pageId, 'press-tab'), {
            body: { with_shift: key === 'Shift+Tab' },
          }),
        );
      }
      throw new ArgumentError(`'key' must be Enter, Tab or Shift+Tab, not '${key}'`);
    },
  },
  {
    name: 'scroll',
    description:
      'Scrolls with the mouse wheel: by distance pixels (negative is up, default 1000), or until ' +
      'the element given is in the middle of the screen.',
    inputSchema: page({ distance: { type: 'number' }, ref: REF, selector: SELECTOR }),
    run: async (args, ctx) => {
      const pageId = stringArg(args, 'page_id');
      const el = elementOf(args);
      if (el) {
        const r = await bringIntoView(ctx, pageId, el);
        if (r) return fromReply(r);
        return fromReply(
          await onPage(ctx, pageId, 'POST', prim(pageId, 'check-visible'), { body: el }),
        );
      }
      const body = typeof args.distance === 'number' ? { distance: args.distance } : {};
      return fromReply(await onPage(ctx, pageId, 'POST', prim(pageId, 'scroll-page'), { body }));
    },
  },
  {
    name: 'screenshot',
    description: 'A PNG of what the page shows (full: the whole page).',
    inputSchema: page({ full: { type: 'boolean' } }),
    run: async (args, ctx) => {
      const pageId = stringArg(args, 'page_id');
      const full = args.full === true;
      const r = await onPage(ctx, pageId, 'GET', ops(pageId, 'screenshot'), { query: { full } });
      if (failed(r)) return fromReply(r);
      const data = String(full ? r.body.full_screenshot : r.body.screenshot);
      return {
        content: [
          { type: 'image', data, mimeType: 'image/png' },
          { type: 'text', text: `Page ${pageId} at ${String(r.body.url)}` },
        ],
      };
    },
  },
  {
    name: 'page_text',
    description:
      "The page's title, URL and readable text (from its HTML, scripts and styles left out).",
    inputSchema: page(),
    run: async (args, ctx) => {
      const pageId = stringArg(args, 'page_id');
      const r = await onPage(ctx, pageId, 'POST', ops(pageId, 'extract-content'));
      if (failed(r)) return fromReply(r);
      const text = htmlToText(String(r.body.content));
      return textResult(`${String(r.body.title)}\n${String(r.body.url)}\n\n${text}`);
    },
  },
  {
    name: 'network',
    description:
      "The page's captured HTTP and WebSocket lines (passive). Pass the answer's mark as since " +
      'next time to get only newer lines.',
    inputSchema: page({
      since: { type: 'integer', minimum: 0 },
      url_contains: { type: 'string' },
      resource_type: { type: 'string', description: 'document, xhr, fetch, script, image…' },
      include_body: { type: 'boolean' },
    }),
    run: async (args, ctx) => {
      const pageId = stringArg(args, 'page_id');
      const query: Json = {};
      for (const k of ['since', 'url_contains', 'resource_type', 'include_body'])
        if (args[k] !== undefined) query[k] = args[k];
      return fromReply(await onPage(ctx, pageId, 'GET', ops(pageId, 'network'), { query }));
    },
  },
  {
    name: 'ask_person',
    description:
      'Hands the page to a person at the live view and waits until they take it over and hand ' +
      'it back (a login to confirm, a code to type). message says what you need. First reports ' +
      'live_url in a progress notification: pass that link on to the person (it opens this page ' +
      'to them with no key, until the hand-back or the timeout). With wait false, answers at once ' +
      'with live_url; call again with wait true to wait for the outcome. Set a long request ' +
      'timeout on your client: this waits for a human (progress is reported).',
    inputSchema: page(
      {
        message: { type: 'string', description: 'what the person should do' },
        timeout: { type: 'number', description: 'seconds to wait (default 600, at most 3600)' },
        wait: {
          type: 'boolean',
          description: 'wait for the hand-back (default true); false answers at once with live_url',
        },
      },
      ['message'],
    ),
    run: async (args, ctx) => {
      const pageId = stringArg(args, 'page_id');
      const body: Json = { message: stringArg(args, 'message') };
      if (typeof args.timeout === 'number') body.timeout = args.timeout;
      if (args.wait !== undefined && typeof args.wait !== 'boolean')
        throw new ArgumentError("'wait' must be a boolean");
      const ask = (wait: boolean, timeoutMs?: number): Promise<RestReply> =>
        onPage(ctx, pageId, 'POST', ops(pageId, 'ask-person'), {
          body: { ...body, wait },
          timeoutMs,
        });
      // The link first: the ask stands on the page while the agent passes the link on.
      const asked = await ask(false);
      if (failed(asked) || args.wait === false) return fromReply(asked);
      const seconds = typeof args.timeout === 'number' ? args.timeout : 600;
      // Joined before the link goes out, so no hand-back can come before the join.
      const outcome = ask(true, seconds * 1000 + 30_000);
      const link = asked.body.live_url;
      await ctx
        .progress(
          typeof link === 'string'
            ? `Waiting for the person: send them ${link} (valid until ${String(asked.body.expires_at)})`
            : 'Waiting for the person at the live view',
        )
        .catch(() => undefined);
      const beat = setInterval(
        () => void ctx.progress('waiting for the person').catch(() => undefined),
        10_000,
      );
      try {
        return fromReply(await outcome);
      } finally {
        clearInterval(beat);
      }
    },
  },
];
