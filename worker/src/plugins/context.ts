import type {
  LocatedObject,
  MediaLink,
  NetworkLine,
  NetworkQuery,
  PluginContext,
  PluginLogger,
} from '@persona-browser/plugin-sdk';
import type { Call } from '../browser/call';
import type { ManagedPage } from '../browser/managed-page';
import type { CaptureRegistry } from '../capture/registry';
import { BrowserFailure, errorMessage } from '../errors';
import { Gestures } from '../human/gestures';
import type { Rng } from '../human/types';
import type { Logger } from '@persona-browser/service-kit';
import type { SecretValues } from '@persona-browser/service-kit';
import type { MediaStore } from '../media/store';
import { MediaCapExceeded } from '../media/store';
import type { VisionClient } from '../vision/client';
import { VisionError } from '../vision/client';
import { viewportShot } from '../vision/viewport-shot';
import type { Recorder } from '../recording/recorder';
import type { BundleStore } from './bundle-store';
import type { CallTrail } from './bundle';
import type { LoadedPlugin } from './discover';
import { PluginPageImpl } from './page';
import { readQrCodes } from './qr';

/** What every plugin call shares: the worker's stores and clients and the plugin's settings. */
export interface ContextDeps {
  captures: CaptureRegistry;
  media: MediaStore;
  vision: VisionClient;
  logger: Logger;
  /** The random source of a plugin (its own stream of PLUGIN_SEED). */
  rngFor: (plugin: string) => Rng;
  /** The worker's merged environment (.env, persona.env, process). */
  env: Readonly<Record<string, string | undefined>>;
  slowmoMs: number;
  allowFileUrls: boolean;
  /** What the log, the capture and error messages never show; plugins add what they conceal. */
  secrets: SecretValues;
  /** Where failed calls leave their bundles; none: no bundles. */
  bundles?: BundleStore;
  /** Records the screen during each call; none: recording is off. */
  recorder?: Recorder;
}

/** How long `network.settled` waits for received responses' lines by default, and how often it looks. */
const SETTLE_WAIT_MS = 5_000;
const SETTLE_POLL_MS = 50;

/** A setting or secret the plugin's family does not declare is a bug in the plugin. */
class UndeclaredSetting extends Error {}

/** The context of one plugin call on a page it holds. */
export function pluginContext(
  plugin: LoadedPlugin,
  mp: ManagedPage,
  call: Call,
  deps: ContextDeps,
  trail?: CallTrail,
): PluginContext {
  const family = plugin.family?.file;
  const where = plugin.family ? `family.json of ${plugin.family.name}` : 'no family.json';
  const child = deps.logger.child({ plugin: plugin.name, page_id: mp.id });
  const log: PluginLogger = {
    info: (m, f) => (trail?.add('info', m, f), child.info(m, f)),
    warn: (m, f) => (trail?.add('warn', m, f), child.warn(m, f)),
    error: (m, f) => (trail?.add('error', m, f), child.error(m, f)),
  };
  const capture = (): ReturnType<CaptureRegistry['get']> => deps.captures.get(mp.id);
  const rng = deps.rngFor(plugin.name);
  return {
    pageId: mp.id,
    plugin: plugin.name,
    signal: call.signal,
    deadline: call.deadline,
    remainingMs: () => call.remainingMs(),
    sleep: (ms) => call.sleep(ms),
    throwIfAborted: () => call.throwIfAborted(),
    gestures: new Gestures(mp, call),
    page: new PluginPageImpl(mp, call, deps),
    log,
    network: {
      async http(q: NetworkQuery = {}): Promise<NetworkLine[]> {
        const c = capture();
        if (!c) return [];
        const r = await c.query({
          since: q.since ?? 0,
          urlContains: q.url_contains,
          resourceType: q.resource_type,
          includeBody: q.include_body ?? false,
        });
        return r.http;
      },
      async mark(): Promise<number> {
        const c = capture();
        if (!c) return 0;
        return (await c.query({ since: Number.MAX_SAFE_INTEGER, includeBody: false })).mark;
      },
      blacklist: () => capture()?.blacklistInForce() ?? [],
      async settled(timeoutMs = SETTLE_WAIT_MS): Promise<boolean> {
        const until = performance.now() + Math.min(timeoutMs, call.remainingMs());
        for (;;) {
          if ((capture()?.unsettled() ?? 0) === 0) return true;
          if (performance.now() >= until) return false;
          await call.sleep(SETTLE_POLL_MS);
        }
      },
    },
    media: {
      put(bytes, filename, contentType): MediaLink {
        try {
          return deps.media.put(Buffer.from(bytes), filename, contentType);
        } catch (err) {
          if (err instanceof MediaCapExceeded) throw new BrowserFailure(err.message, mp.id);
          throw err;
        }
      },
    },
    vision: {
      async locate(description: string): Promise<LocatedObject> {
        try {
          deps.vision.assertConfigured();
          const shot = await viewportShot(mp, call);
          const r = await deps.vision.locate(shot.png, description, shot.viewport, call.signal);
          return {
            bounding_box: r.bounding_box,
            center_x: r.center_x,
            center_y: r.center_y,
            tokens_used: r.tokens_used,
            costs_usd: r.costs_usd,
            duration_seconds: r.duration_seconds,
          };
        } catch (err) {
          if (err instanceof VisionError)
            throw new BrowserFailure(`Vision search failed: ${err.message}`, mp.id);
          throw err;
        }
      },
    },
    codes: {
      async readQr(image: Uint8Array): Promise<string[]> {
        try {
          return await readQrCodes(image);
        } catch (err) {
          throw new BrowserFailure(`Reading QR codes failed: ${errorMessage(err)}`, mp.id);
        }
      },
    },
    conceal: (value) => deps.secrets.add(value),
    async waitingForPerson<T>(what: string, work: () => Promise<T>): Promise<T> {
      const before = mp.awaitingPerson;
      mp.awaitingPerson = what;
      child.info('waiting for the person', { what });
      try {
        return await work();
      } finally {
        mp.awaitingPerson = before;
      }
    },
    random: () => rng.next(),
    chance: (p) => p >= 1 || (p > 0 && rng.next() < p),
    setting(name) {
      const spec = family?.settings?.[name];
      if (!spec) throw new UndeclaredSetting(`setting ${name} is not declared (${where})`);
      const v = deps.env[name];
      return v !== undefined && v !== '' ? v : spec.default;
    },
    secret(name) {
      if (!family?.secrets?.includes(name))
        throw new UndeclaredSetting(`secret ${name} is not declared (${where})`);
      const v = deps.env[name];
      return v !== undefined && v !== '' ? v : undefined;
    },
  };
}
