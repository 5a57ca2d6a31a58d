import type { operations } from '@persona-browser/client';
import { settle } from '@persona-browser/client';
import { fromResult, htmlToText, textResult, toolError } from './results';
import { within } from './rest';
import type { Json } from './rest';
import type { ToolDef } from './tool';
import { ArgumentError, onPage, optionalString, stringArg } from './tool';
import { REF, SELECTOR, bringIntoView, elementOf, onElement, textToEnter } from './elements';

const PAGE_ID = { type: 'string', description: 'the page, as list_pages or create_page named it' };
type NetworkQuery = NonNullable<operations['get-ops-network']['parameters']['query']>;
const RESOURCE_TYPES: ReadonlyArray<NonNullable<NetworkQuery['resource_type']>> = [
  'document',
  'xhr',
  'fetch',
];

/** The network tool's filters, each of the type the route takes. */
function networkQuery(args: Json): NetworkQuery {
  const query: NetworkQuery = {};
  const { since, url_contains: contains, resource_type: type, include_body: body } = args;
  if (since !== undefined) {
    if (typeof since !== 'number' || !Number.isInteger(since) || since < 0)
      throw new ArgumentError("'since' must be an integer of 0 or more");
    query.since = since;
  }
  if (contains !== undefined) query.url_contains = optionalString(args, 'url_contains');
  if (type !== undefined) {
    const known = RESOURCE_TYPES.find((t) => t === type);
    if (!known)
      throw new ArgumentError(`'resource_type' must be one of ${RESOURCE_TYPES.join(', ')}`);
    query.resource_type = known;
  }
  if (body !== undefined) {
    if (typeof body !== 'boolean') throw new ArgumentError("'include_body' must be a boolean");
    query.include_body = body;
  }
  return query;
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
      fromResult(await settle(ctx.target.api.GET('/api/v1/system/status/pages'))),
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
      const made = await settle(
        ctx.target.api.POST('/api/v1/ops/create-page', {
          body: pageId === undefined ? {} : { page_id: pageId },
        }),
      );
      if (!made.ok) return fromResult(made);
      const id = made.data.page_id;
      if (id === null) return toolError('The persona opened a page without naming it');
      const leased = await ctx.leases.acquire(ctx.target, id);
      if (!leased.ok) return fromResult(leased);
      return fromResult(made, (b) => ({ ...b, leased_to_this_session: true }));
    },
  },
  {
    name: 'destroy_page',
    description: 'Closes a page. Refused (423) when another client holds its lease.',
    inputSchema: page(),
    run: async (args, ctx) => {
      const pageId = stringArg(args, 'page_id');
      const r = await settle(
        ctx.target.api.POST('/api/v1/ops/{page_id}/destroy-page', onPage(ctx, pageId)),
      );
      if (r.ok) ctx.leases.forget(ctx.target, pageId);
      return fromResult(r);
    },
  },
  {
    name: 'lease_page',
    description:
      'Leases an existing page to this session (renewed while the session lives, released when it ends).',
    inputSchema: page(),
    run: async (args, ctx) =>
      fromResult(await ctx.leases.acquire(ctx.target, stringArg(args, 'page_id'))),
  },
  {
    name: 'release_page',
    description: "Gives this session's lease on a page back.",
    inputSchema: page(),
    run: async (args, ctx) => {
      const r = await ctx.leases.release(ctx.target, stringArg(args, 'page_id'));
      return r ? fromResult(r) : toolError('This session holds no lease on that page');
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
      return fromResult(
        await settle(
          ctx.target.api.POST('/api/v1/ops/{page_id}/navigate', {
            ...onPage(ctx, pageId),
            body: { url },
          }),
        ),
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
      const r = await settle(
        ctx.target.api.GET('/api/v1/ops/{page_id}/snapshot', onPage(ctx, pageId)),
      );
      if (!r.ok) return fromResult(r);
      const { url, title, snapshot, truncated } = r.data;
      const head = `Page ${pageId}: ${title} (${url})${truncated ? ' [truncated]' : ''}`;
      return textResult(`${head}\n${snapshot}`);
    },
  },
  {
    name: 'click',
    description:
      'Moves the mouse along a curved path to the element and clicks it, as a person does ' +
      '(the wheel brings it on screen first).',
    inputSchema: page({ ref: REF, selector: SELECTOR }),
    run: async (args, ctx) => fromResult(await onElement(ctx, args, 'click-element')),
  },
  {
    name: 'hover',
    description: 'Moves the mouse onto the element without clicking.',
    inputSchema: page({ ref: REF, selector: SELECTOR }),
    run: async (args, ctx) => fromResult(await onElement(ctx, args, 'hover-element')),
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
      const input = await textToEnter(ctx, args);
      if ('failed' in input) return fromResult(input.failed);
      const typed = await settle(
        ctx.target.api.POST('/api/v1/primitive/{page_id}/type-text', {
          ...onPage(ctx, pageId),
          body: input,
        }),
      );
      if (!typed.ok || args.submit !== true) return fromResult(typed);
      const entered = await settle(
        ctx.target.api.POST('/api/v1/primitive/{page_id}/press-enter', onPage(ctx, pageId)),
      );
      return fromResult(entered, (b) => ({ ...typed.data, submitted: b.key === 'Enter' }));
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
      const input = await textToEnter(ctx, args);
      if ('failed' in input) return fromResult(input.failed);
      return fromResult(
        await settle(
          ctx.target.api.POST('/api/v1/primitive/{page_id}/paste-text', {
            ...onPage(ctx, pageId),
            body: input,
          }),
        ),
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
      if (key === 'Enter') {
        return fromResult(
          await settle(
            ctx.target.api.POST('/api/v1/primitive/{page_id}/press-enter', onPage(ctx, pageId)),
          ),
        );
      }
      if (key === 'Tab' || key === 'Shift+Tab') {
        return fromResult(
          await settle(
            ctx.target.api.POST('/api/v1/primitive/{page_id}/press-tab', {
              ...onPage(ctx, pageId),
              body: { with_shift: key === 'Shift+Tab' },
            }),
          ),
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
        if (r) return fromResult(r);
        return fromResult(
          await settle(
            ctx.target.api.POST('/api/v1/primitive/{page_id}/check-visible', {
              ...onPage(ctx, pageId),
              body: el,
            }),
          ),
        );
      }
      const body = typeof args.distance === 'number' ? { distance: args.distance } : {};
      return fromResult(
        await settle(
          ctx.target.api.POST('/api/v1/primitive/{page_id}/scroll-page', {
            ...onPage(ctx, pageId),
            body,
          }),
        ),
      );
    },
  },
  {
    name: 'screenshot',
    description: 'A PNG of what the page shows (full: the whole page).',
    inputSchema: page({ full: { type: 'boolean' } }),
    run: async (args, ctx) => {
      const pageId = stringArg(args, 'page_id');
      const full = args.full === true;
      const r = await settle(
        ctx.target.api.GET('/api/v1/ops/{page_id}/screenshot', onPage(ctx, pageId, { full })),
      );
      if (!r.ok) return fromResult(r);
      const data = (full ? r.data.full_screenshot : null) ?? r.data.screenshot;
      return {
        content: [
          { type: 'image', data, mimeType: 'image/png' },
          { type: 'text', text: `Page ${pageId} at ${r.data.url}` },
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
      const r = await settle(
        ctx.target.api.POST('/api/v1/ops/{page_id}/extract-content', onPage(ctx, pageId)),
      );
      if (!r.ok) return fromResult(r);
      const { title, url, content } = r.data;
      return textResult(`${title}\n${url}\n\n${htmlToText(content)}`);
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
      resource_type: { type: 'string', enum: RESOURCE_TYPES },
      include_body: { type: 'boolean' },
    }),
    run: async (args, ctx) => {
      const pageId = stringArg(args, 'page_id');
      const query = networkQuery(args);
      return fromResult(
        await settle(
          ctx.target.api.GET('/api/v1/ops/{page_id}/network', onPage(ctx, pageId, query)),
        ),
      );
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
      const message = stringArg(args, 'message');
      const timeout = typeof args.timeout === 'number' ? args.timeout : undefined;
      if (args.wait !== undefined && typeof args.wait !== 'boolean')
        throw new ArgumentError("'wait' must be a boolean");
      const ask = (wait: boolean, timeoutMs?: number) =>
        settle(
          ctx.target.api.POST('/api/v1/ops/{page_id}/ask-person', {
            ...onPage(ctx, pageId),
            body: { message, ...(timeout === undefined ? {} : { timeout }), wait },
            // A wait for a person outlasts the default deadline of a call.
            ...(timeoutMs === undefined ? {} : { fetch: within(timeoutMs) }),
          }),
        );
      // The link first: the ask stands on the page while the agent passes the link on.
      const asked = await ask(false);
      if (!asked.ok || args.wait === false) return fromResult(asked);
      const seconds = timeout ?? 600;
      // Joined before the link goes out, so no hand-back can come before the join.
      const outcome = ask(true, seconds * 1000 + 30_000);
      const link = asked.data.live_url;
      await ctx
        .progress(
          link !== null
            ? `Waiting for the person: send them ${link} (valid until ${String(asked.data.expires_at)})`
            : 'Waiting for the person at the live view',
        )
        .catch(() => undefined);
      const beat = setInterval(
        () => void ctx.progress('waiting for the person').catch(() => undefined),
        10_000,
      );
      try {
        return fromResult(await outcome);
      } finally {
        clearInterval(beat);
      }
    },
  },
];
