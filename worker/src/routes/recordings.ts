import Joi from 'joi';
import { NotFound } from '../errors';
import type { Route } from '../http/route';
import { route } from '../http/route';
import { envelope } from '../http/schemas';
import type { RecordingStore } from '../recording/recording-store';
import { RECORDING_FILE } from '../recording/recording-store';

const str = Joi.string();

const unknownRecording = (id: string): NotFound => new NotFound(`No recording ${id}`);

const outcome = str.valid(
  'ok',
  'failed',
  'crashed',
  'timeout',
  'refused',
  'released',
  'expired',
  'closed',
);
const kind = str
  .valid('plugin', 'lease')
  .description('a plugin call, or a leased page from its lease to its end (RECORDING_LEASES)');

const summary = Joi.object({
  id: str.required(),
  kind: kind.required(),
  plugin: str.allow('').required(),
  page_id: str.allow('').required(),
  time: str.allow('').required(),
  duration_ms: Joi.number().required(),
  outcome: str.allow('').required(),
  frames: Joi.number().integer().required(),
  size: Joi.number().integer().required(),
  missing: str.allow(null).required(),
}).label('RecordingSummary');

const meta = Joi.object({
  id: str.required(),
  kind: kind.required(),
  plugin: str.allow('').required().description("the plugin called; '' for a lease"),
  page_id: str.required(),
  time: str.required(),
  duration_ms: Joi.number().required(),
  outcome: outcome.required(),
  frames: Joi.number().integer().required(),
  width: Joi.number().integer().required(),
  height: Joi.number().integer().required(),
  fps: Joi.number().required(),
  truncated: Joi.boolean().required(),
  missing: str.allow(null).required(),
}).label('RecordingMeta');

/**
 * The screen recordings of plugin calls (docs/api.md, Recordings). With recording off the list
 * is empty and every id is unknown.
 */
export function recordingRoutes(store: RecordingStore | null): Route[] {
  return [
    route({
      name: 'recordings',
      method: 'get',
      path: '/api/v1/recordings',
      auth: true,
      tag: 'Recordings',
      summary: 'The screen recordings of plugin calls and leases, newest first',
      description:
        '`recording` says whether recording is on (`RECORDING`, or `RECORDING_LEASES` for whole leases).',
      response: envelope({
        recording: Joi.boolean().required(),
        recordings: Joi.array().items(summary).required(),
      }),
      handler: async () => ({ recording: store !== null, recordings: store?.list() ?? [] }),
    }),
    route({
      name: 'recording',
      method: 'get',
      path: '/api/v1/recordings/:id',
      docPath: '/api/v1/recordings/{id}',
      auth: true,
      tag: 'Recordings',
      summary: "A recording's meta.json: the plugin, page, time, outcome, frames",
      description: '`missing` says why there is no file (a secret on the page), else null.',
      response: envelope({ recording: meta.required() }),
      handler: async ({ params }) => {
        const id = params.id ?? '';
        const m = store?.meta(id);
        if (!m) throw unknownRecording(id);
        return { recording: m };
      },
    }),
    route({
      name: 'recording-file',
      method: 'get',
      path: `/api/v1/recordings/:id/${RECORDING_FILE}`,
      docPath: `/api/v1/recordings/{id}/${RECORDING_FILE}`,
      auth: true,
      tag: 'Recordings',
      summary: 'The recording as an animated PNG (image/png; browsers play it in an <img>)',
      raw: true,
      rawType: 'image/png',
      handler: async ({ params, res }) => {
        const id = params.id ?? '';
        const bytes = store?.file(id);
        if (!bytes) throw unknownRecording(id);
        res.writeHead(200, {
          'Content-Type': 'image/png',
          'Content-Length': String(bytes.length),
          'Cache-Control': 'no-store',
          'X-Content-Type-Options': 'nosniff',
        });
        res.end(bytes);
      },
    }),
  ];
}
