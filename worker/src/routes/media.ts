import { NotFound } from '../errors';
import type { Route } from '../http/route';
import { route } from '../http/route';
import { contentDisposition } from '../media/headers';
import type { MediaStore } from '../media/store';
import { MEDIA_PATH } from '../media/store';

export const MEDIA_GONE = 'Media link unknown, expired or already downloaded';

export function mediaRoutes(media: MediaStore): Route[] {
  return [
    route({
      name: 'download',
      method: 'get',
      path: `${MEDIA_PATH}/:token`,
      auth: true,
      tag: 'Media',
      summary: 'Download a file a plugin produced: served once, then dropped',
      description:
        'Raw bytes with Content-Type, Content-Length and Content-Disposition: attachment. ' +
        'Unknown, expired or already downloaded tokens give 404 with the error envelope.',
      // No JSON response schema: the OpenAPI document lists it as a binary body.
      raw: true,
      handler: async ({ req, res, params }) => {
        const token = params.token ?? '';
        // Express answers HEAD with the GET route; a HEAD must not use up the one download.
        const head = req.method === 'HEAD';
        const item = head ? media.peek(token) : media.take(token);
        if (!item) throw new NotFound(MEDIA_GONE);
        res.writeHead(200, {
          'Content-Type': item.contentType,
          'Content-Length': String(item.bytes.length),
          'Content-Disposition': contentDisposition(item.filename),
          'Cache-Control': 'no-store',
          'X-Content-Type-Options': 'nosniff',
        });
        res.end(head ? undefined : item.bytes);
      },
    }),
  ];
}
