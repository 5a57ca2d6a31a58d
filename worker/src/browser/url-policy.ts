/**
 * Which URLs navigate opens, scheme by scheme:
 * - `http:`, `https:` — the web;
 * - `data:` — a document written into the URL (tests, generated pages);
 * - `about:blank` — an empty page (other `about:` pages are the browser's settings in disguise);
 * - `file:` — only with ALLOW_FILE_URLS=true: it reads the worker's own disk;
 * - anything else is refused: `javascript:` would run script in the page's own world, and
 *   `chrome:`, `devtools:`, `view-source:`, `blob:` or extension pages are the browser's
 *   internals or belong to another document.
 */
export function navigationRefusal(raw: string, allowFileUrls: boolean): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "'url' must be an absolute URL with a scheme, such as https://example.com/";
  }
  switch (url.protocol) {
    case 'http:':
    case 'https:':
      return url.hostname ? null : "'url' has no host";
    case 'data:':
      return null;
    case 'about:':
      return url.href === 'about:blank' ? null : "'url' may be about:blank, no other about: page";
    case 'file:':
      return allowFileUrls
        ? null
        : "'url' is a file: URL, which this worker does not open (set ALLOW_FILE_URLS=true)";
    default:
      return `'url' scheme ${url.protocol} is not opened by navigate (http, https, data, about:blank, file with ALLOW_FILE_URLS)`;
  }
}
