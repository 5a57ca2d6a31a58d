import Joi from 'joi';

export const PAGE_STATES = ['idle', 'busy', 'loading', 'error', 'crashed', 'stuck'] as const;
export type PageState = (typeof PAGE_STATES)[number];

/** The navigator status (`GET /api/v1/system/status`, docs/api.md). */
export interface NavigatorStatus {
  initialized: boolean;
  browser_context_active: boolean;
  page_pool_active: boolean;
  max_pages: number;
  slowmo: number;
  /**
   * What the persona's settings give away to pages (a UTC clock...), one line each. Every worker
   * of this version sends it; optional so that a waker reading an older worker's status still
   * finds it ready.
   */
  warnings?: string[];
  page_count: number | null;
  available_pages: number | null;
}

/** One page of the detailed pool status. */
export interface PageEntry {
  page_id: string;
  state: PageState;
  current_operation: string | null;
  operation_duration: number | null;
  responsive: boolean;
  loading: boolean;
  stuck: boolean;
  error_count: number;
  leased: boolean;
  lease_expires_in: number | null;
  last_activity: number;
  url: string;
  title: string;
}

/** The pool status (`GET /api/v1/system/status/pages`, docs/api.md). */
export interface PoolStatus {
  total_pages: number;
  max_pages: number;
  status_by_state: Record<PageState, number>;
  pages: PageEntry[];
}

const int = Joi.number().integer().min(0);
const bool = Joi.boolean().required();

export const navigatorStatusSchema = Joi.object<NavigatorStatus, true>({
  initialized: bool,
  browser_context_active: bool,
  page_pool_active: bool,
  max_pages: int.required(),
  slowmo: int.required().description('ms of artificial delay after actions'),
  warnings: Joi.array()
    .items(Joi.string())
    .description("what the persona's settings give away to pages (a UTC clock...), one line each"),
  page_count: int.allow(null).required(),
  available_pages: int.allow(null).required(),
}).label('NavigatorStatus');

export const pageEntrySchema = Joi.object<PageEntry, true>({
  page_id: Joi.string().required(),
  state: Joi.string()
    .valid(...PAGE_STATES)
    .required(),
  current_operation: Joi.string().allow(null).required(),
  operation_duration: Joi.number().min(0).allow(null).required().description('seconds'),
  responsive: bool,
  loading: bool,
  stuck: bool,
  error_count: int.required(),
  leased: bool,
  lease_expires_in: Joi.number().allow(null).required().description('seconds'),
  last_activity: Joi.number().required().description('epoch seconds, fractional'),
  url: Joi.string().allow('').required(),
  title: Joi.string().allow('').required(),
}).label('PageEntry');

export const poolStatusSchema = Joi.object<PoolStatus, true>({
  total_pages: int.required(),
  max_pages: int.required(),
  status_by_state: Joi.object(
    Object.fromEntries(PAGE_STATES.map((s) => [s, int.required()])),
  ).required(),
  pages: Joi.array().items(pageEntrySchema).required(),
}).label('PoolStatus');
