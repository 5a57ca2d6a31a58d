import Joi from 'joi';
import { NotFound } from '../errors';
import type { Route } from '../http/route';
import { route } from '../http/route';
import { envelope } from '../http/schemas';
import type { BundleStore } from '../plugins/bundle-store';
import { BUNDLE_FILES } from '../plugins/bundle-store';

const str = Joi.string();
const FILES = Object.keys(BUNDLE_FILES).join(', ');

const unknownBundle = (id: string): NotFound => new NotFound(`No failure bundle ${id}`);

const summary = Joi.object({
  debug_id: str.required(),
  plugin: str.allow('').required(),
  page_id: str.allow('').required(),
  error: str.allow('').required(),
  time: str.allow('').required(),
  size: Joi.number().integer().required(),
}).label('BundleSummary');

const meta = Joi.object({
  debug_id: str.required(),
  plugin: str.required(),
  page_id: str.required(),
  url: str.allow('').required(),
  time: str.required(),
  duration_ms: Joi.number().required(),
  error: Joi.object({
    status: Joi.number().integer().allow(null).required(),
    message: str.allow('').required(),
  }).required(),
  missing: Joi.object().pattern(str, str.allow('')).required(),
  recording: str.description("The id of the call's recording (GET /api/v1/recordings/{id})"),
}).label('BundleMeta');

/** The failure bundles that failed plugin calls left (docs/api.md, Failure bundles). */
export function bundleRoutes(store: BundleStore): Route[] {
  return [
    route({
      name: 'bundles',
      method: 'get',
      path: '/api/v1/bundles',
      auth: true,
      tag: 'Bundles',
      summary: 'The failure bundles of failed plugin calls, newest first',
      response: envelope({ bundles: Joi.array().items(summary).required() }),
      handler: async () => ({ bundles: store.list() }),
    }),
    route({
      name: 'bundle',
      method: 'get',
      path: '/api/v1/bundles/:debug_id',
      docPath: '/api/v1/bundles/{debug_id}',
      auth: true,
      tag: 'Bundles',
      summary: "A failure bundle's meta.json: the plugin, page, URL, time, error, duration",
      description: `\`missing\` names the files that could not be written and why. Files: ${FILES}.`,
      response: envelope({ bundle: meta.required() }),
      handler: async ({ params }) => {
        const id = params.debug_id ?? '';
        const m = store.meta(id);
        if (!m) throw unknownBundle(id);
        return { bundle: m };
      },
    }),
    route({
      name: 'bundle-file',
      method: 'get',
      path: '/api/v1/bundles/:debug_id/:file',
      docPath: '/api/v1/bundles/{debug_id}/{file}',
      auth: true,
      tag: 'Bundles',
      summary: 'One file of a failure bundle, with its content type',
      description: `\`file\` is one of ${FILES}.`,
      raw: true,
      handler: async ({ params, res }) => {
        const id = params.debug_id ?? '';
        const f = store.file(id, params.file ?? '');
        if (!f) throw unknownBundle(`${id}/${params.file ?? ''}`);
        res.writeHead(200, {
          'Content-Type': f.contentType,
          'Content-Length': String(f.bytes.length),
          'Cache-Control': 'no-store',
          'X-Content-Type-Options': 'nosniff',
          // A page's HTML is the site's: shown here it runs no script and loads nothing.
          'Content-Security-Policy': "sandbox; default-src 'none'; img-src data:",
        });
        res.end(f.bytes);
      },
    }),
  ];
}
