import Joi from 'joi';

/** The checkout's HEAD commit as ping reports it (`date` in ISO 8601). */
export interface CommitInfo {
  hash: string;
  subject: string;
  date: string;
}

export interface Activity {
  /** Client requests outside /api/v1/system/ running now. */
  in_flight: number;
  /** Whole seconds since the last one finished; null while one is in flight. */
  idle_seconds: number | null;
}

/** The ping's answer (docs/api.md, System): what a health check of a worker reads. */
export interface PingResult {
  pong: number;
  status: 'alive';
  commit: CommitInfo | null;
  persona: string | null;
  activity: Activity;
  proxy_errors: number | null;
}

const int = Joi.number().integer();

export const commitSchema = Joi.object<CommitInfo, true>({
  hash: Joi.string().required(),
  subject: Joi.string().allow('').required(),
  date: Joi.string().isoDate().required(),
}).label('Commit');

export const pingSchema = Joi.object<PingResult, true>({
  pong: int.required().description('epoch milliseconds'),
  status: Joi.string().valid('alive').required(),
  commit: commitSchema.allow(null).required(),
  persona: Joi.string().allow(null).required(),
  activity: Joi.object<Activity, true>({
    in_flight: int.min(0).required(),
    idle_seconds: int.min(0).allow(null).required(),
  }).required(),
  proxy_errors: int.min(0).allow(null).required(),
}).label('Ping');
