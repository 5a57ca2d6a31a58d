import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Result } from '@persona-browser/client';

/** A tool error an agent reads: the API's own message, and its status when it was not 200. */
export function toolError(message: string, status?: number): CallToolResult {
  const text = status !== undefined && status !== 200 ? `${message} (HTTP ${status})` : message;
  return { isError: true, content: [{ type: 'text', text }] };
}

/**
 * An answer as the tool's result: JSON text on success (`shape` may reword it), a tool error
 * with the API's message (and its status) else.
 */
export function fromResult<D>(r: Result<D>, shape?: (data: D) => unknown): CallToolResult {
  if (!r.ok) return toolError(r.error, r.status);
  const body = shape ? shape(r.data) : r.data;
  return { content: [{ type: 'text', text: JSON.stringify(body, null, 2) }] };
}

export const textResult = (text: string): CallToolResult => ({
  content: [{ type: 'text', text }],
});

const ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
};

/** Readable text of an HTML document: no scripts or styles, block elements on their own lines. */
export function htmlToText(html: string): string {
  return html
    .replace(/<(script|style|noscript|template|svg)\b[\s\S]*?<\/\1\s*>/gi, ' ')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(
      /<(br|\/p|\/div|\/li|\/h[1-6]|\/tr|\/section|\/article|\/header|\/footer)\b[^>]*>/gi,
      '\n',
    )
    .replace(/<[^>]+>/g, ' ')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (m, e: string) => {
      if (e[0] === '#') {
        const code =
          e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
        return Number.isFinite(code) && code > 0 && code < 0x110000
          ? String.fromCodePoint(code)
          : m;
      }
      return ENTITIES[e.toLowerCase()] ?? m;
    })
    .replace(/[ \t\f\r]+/g, ' ')
    .replace(/ *\n[ \n]*/g, '\n')
    .trim();
}
