import type { RunningWorker } from './worker';

/**
 * A page that writes every click and key it received into its title, so a test reads what the
 * page saw from the pool list (no DevTools of its own needed). Clicks are in screen pixels.
 */
export const RECORDER =
  'data:text/html,' +
  encodeURIComponent(
    '<!doctype html><html><head><title>seen:[]</title></head>' +
      '<body style="margin:0;height:100vh;background:#fff">recorder<script>' +
      'const seen=[];const show=()=>{document.title="seen:"+JSON.stringify(seen)};' +
      'addEventListener("click",e=>{seen.push(["click",e.screenX,e.screenY,e.isTrusted]);show()},true);' +
      'addEventListener("keydown",e=>{seen.push(["key",e.key,e.isTrusted]);show()},true);' +
      '</script></body></html>',
  );

/** What the recorder on page `id` has seen so far. */
export async function seen(w: RunningWorker, id: string): Promise<unknown[][]> {
  const r = await w.call<Record<string, any>>('GET', '/api/v1/system/status/pages', {
    auth: false,
  });
  const page = (r.body.pages as Array<{ page_id: string; title?: string }>).find(
    (p) => p.page_id === id,
  );
  const title = page?.title ?? '';
  return title.startsWith('seen:') ? (JSON.parse(title.slice(5)) as unknown[][]) : [];
}
