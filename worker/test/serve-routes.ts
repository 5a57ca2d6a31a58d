import http from 'node:http';
import express from 'express';
import type { Logger } from '@persona-browser/service-kit';
import type { LoopbackSite } from '@persona-browser/testkit/loopback';
import { listenLoopback } from '@persona-browser/testkit/loopback';
import type { Navigator } from '../src/browser/navigator';
import { Authenticator } from '../src/http/auth';
import { errorHandler } from '../src/http/error-handler';
import { mount } from '../src/http/mount';
import { ResponseCheck } from '../src/http/response-check';
import type { Route } from '../src/http/route';

/**
 * `routes` served on a loopback port through the route layer as the worker serves them (no
 * ETag, the response check the test suite runs with, JSON bodies, the error handler), with
 * `key` as the service key.
 */
export function serveRoutes(
  routes: Route[],
  deps: { navigator: Navigator; key: string; logger: Logger },
): Promise<LoopbackSite> {
  const app = express();
  app.set('etag', false);
  app.use(new ResponseCheck(deps.logger).middleware());
  app.use(express.json());
  const router = express.Router();
  mount(router, routes, {
    navigator: deps.navigator,
    auth: new Authenticator({ serviceKey: deps.key, persona: null }),
  });
  app.use(router);
  app.use(errorHandler(deps.logger));
  return listenLoopback(http.createServer(app));
}
