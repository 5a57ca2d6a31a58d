import type http from 'node:http';
import type { NavigatorStatus, PingResult, PoolStatus } from '@persona-browser/contracts';
import type { PageState } from '@persona-browser/contracts';
import { SYSTEM_PATHS } from '@persona-browser/contracts';
import { errorEnvelope, errorMessage, pathOf, sendJson } from '@persona-browser/service-kit';
import type { Persona } from '../persona/persona';
import { personaWorkerEnv } from '../persona/folders';
import type { WorkerDescriptions } from './worker-description';

/** A persona's pool cap: a constant of the worker (MAX_PAGES, docs/api.md). */
const MAX_PAGES = 5;
/** The worker's default BROWSER_SLOWMO, for a persona whose settings do not give one. */
const DEFAULT_SLOWMO = 200;
/** Ping pauses about 2 s (1.8 to 2.2) before it answers, as the worker's own does. */
const pingPauseMs = (): number => 1800 + Math.random() * 400;

export interface AsleepDeps {
  /** What the checkout's worker answers without a browser (plugins, their docs, the API document). */
  descriptions: WorkerDescriptions;
  /** The fleet's variables under each persona's own (`persona.env`), as its worker gets them. */
  workerEnv: Readonly<Record<string, string>>;
  /**
   * What a worker inherits beneath those: the waker's own environment under the process
   * driver (a child process), nothing in a container.
   */
  inherited?: Readonly<Record<string, string>>;
}

/**
 * The public routes of a persona whose worker is not running, answered by the front door from
 * what the waker knows, in the shapes the worker answers them (docs/api.md), with `persona_state`
 * saying why the browser is not up (`sleeping`, `waking`, `stopping`, `crashed`). None of them
 * wakes the persona: a monitor polling status or a client reading the plugin list costs nothing.
 */
export class AsleepAnswers {
  constructor(private readonly deps: AsleepDeps) {}

  /** Answers `req` (a `status`-access route); never throws. */
  async answer(
    persona: Persona,
    req: http.IncomingMessage,
    res: http.ServerResponse,
  ): Promise<void> {
    const path = pathOf(req.url ?? '/');
    const state = { persona_state: persona.state };
    try {
      if (path === SYSTEM_PATHS.ping) {
        await new Promise((r) => setTimeout(r, pingPauseMs()));
        sendJson(res, 200, { ...this.ping(persona), ...state });
      } else if (path === SYSTEM_PATHS.status) {
        sendJson(res, 200, { ...this.status(persona), ...state });
      } else if (path === SYSTEM_PATHS.pages) {
        sendJson(res, 200, { ...emptyPool(), ...state });
      } else {
        await this.fromDescription(persona, path, res);
      }
    } catch (err) {
      if (res.headersSent) return void res.destroy();
      sendJson(
        res,
        503,
        errorEnvelope(`persona ${persona.name} is ${persona.state}: ${errorMessage(err)}`),
      );
    }
  }

  private env(persona: Persona): Record<string, string> {
    return { ...this.deps.inherited, ...personaWorkerEnv(persona.spec.dir, this.deps.workerEnv) };
  }

  private ping(persona: Persona): PingResult {
    return {
      pong: Date.now(),
      status: 'alive',
      // No worker runs, so none runs a commit: a health gate that reads this ping must not
      // take the commit a woken worker would run for one that answered.
      commit: persona.commit,
      persona: persona.name,
      activity: { in_flight: 0, idle_seconds: persona.activity.idleSeconds() },
      proxy_errors: persona.proxyStatus()?.proxy_errors ?? null,
    };
  }

  private status(persona: Persona): NavigatorStatus {
    const slowmo = Number(this.env(persona).BROWSER_SLOWMO);
    return {
      initialized: false,
      browser_context_active: false,
      page_pool_active: false,
      max_pages: MAX_PAGES,
      slowmo: Number.isInteger(slowmo) && slowmo >= 0 ? slowmo : DEFAULT_SLOWMO,
      warnings: [],
      // 0 (not null) once the navigator is stopped; a sleeping persona has no pages.
      page_count: 0,
      available_pages: 0,
    };
  }

  private async fromDescription(
    persona: Persona,
    path: string,
    res: http.ServerResponse,
  ): Promise<void> {
    const described = await this.deps.descriptions.get(this.env(persona).PLUGINS_DIR);
    if (path === '/api/v1/plugins') return sendJson(res, 200, described.plugins);
    if (path === '/openapi.json' || path === '/api/v1/openapi.json')
      return sendJson(res, 200, described.openapi);
    const name = /^\/api\/v1\/plugins\/(.+)\/docs$/.exec(path)?.[1];
    if (name === undefined) {
      return sendJson(res, 404, errorEnvelope(`No route ${path}`));
    }
    const plugin = decodeURIComponent(name);
    if (!(plugin in described.docs)) {
      return sendJson(res, 404, errorEnvelope(`No plugin named ${plugin}`));
    }
    const readme = described.docs[plugin];
    if (readme === null || readme === undefined) {
      return sendJson(res, 404, errorEnvelope(`Plugin ${plugin} has no README`));
    }
    res.writeHead(200, {
      'content-type': 'text/markdown; charset=utf-8',
      'content-length': String(Buffer.byteLength(readme)),
    });
    res.end(readme);
  }
}

/** The pool of a persona whose browser is not up: no pages. */
function emptyPool(): PoolStatus {
  const byState: Record<PageState, number> = {
    idle: 0,
    busy: 0,
    loading: 0,
    error: 0,
    crashed: 0,
    stuck: 0,
  };
  return { total_pages: 0, max_pages: MAX_PAGES, status_by_state: byState, pages: [] };
}
