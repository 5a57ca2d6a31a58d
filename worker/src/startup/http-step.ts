import type http from 'node:http';
import path from 'node:path';
import type { CommitInfo } from '@persona-browser/contracts';
import { readCommit } from '@persona-browser/contracts';
import { listen, stopServer } from '@persona-browser/service-kit';
import { createServer } from '../app';
import type { Navigator } from '../browser/navigator';
import type { CaptureRegistry } from '../capture/registry';
import { Authenticator } from '../http/auth';
import { WorkerMetrics } from '../http/metrics';
import { RequestTracker } from '../http/request-tracker';
import type { ProxyRelay } from '../identity/relay';
import { LiveView } from '../live';
import { CdpEndpoint } from '../remote/cdp-endpoint';
import { loopbackUrl, McpEndpoint } from '../remote/mcp-endpoint';
import type { VncTarget } from '../live';
import { RequestLog } from '../log/request-log';
import type { MediaStore } from '../media/store';
import { workerVersion } from '../paths';
import { BundleStore } from '../plugins/bundle-store';
import { pluginRandom } from '../plugins/random';
import type { Grab } from '../recording/recorder';
import { fileGrab, Recorder, xwdGrab } from '../recording/recorder';
import { FrameBudget } from '../recording/frame-budget';
import { LeaseRecordings } from '../recording/lease-recordings';
import { RecordingStore } from '../recording/recording-store';
import { pageTextOf, pixelsWithheld } from '../plugins/bundle';
import { ProxyErrors } from '../system-info';
import { sleep } from '../util';
import { VisionClient } from '../vision/client';
import type { StartupStep } from './plan';
import type { WorkerSettings } from './settings';

/** How long calls under way may take to finish once the worker is told to stop. */
const DRAIN_MS = 5_000;

/** What the REST service serves: everything the steps before it started. */
type Served = WorkerSettings & {
  /** The X display the browser shows on (recordings are taken of it). */
  display: string;
  /** The screen as a file Xvfb keeps (the worker's own display, recording on), else null. */
  framebuffer: string | null;
  relay: ProxyRelay | null;
  liveVnc: VncTarget;
  media: MediaStore;
  captures: CaptureRegistry;
  navigator: Navigator;
  /** Ends the program (the kill endpoint): every step stops, in reverse. */
  exit: (reason: string) => void;
};

export interface Listening {
  server: http.Server;
  tracker: RequestTracker;
  live: LiveView;
  cdp: CdpEndpoint;
  mcp: McpEndpoint;
  leaseRecordings: LeaseRecordings | null;
}

/** The port the server got (PORT=0 asks for a free one). */
function boundPort(server: http.Server, asked: number): number {
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : asked;
}

/** The screen: the file Xvfb keeps, else `xwd -root` of a display the worker was given. */
const screenGrab = (ready: Served): Grab =>
  ready.framebuffer ? fileGrab(ready.framebuffer) : xwdGrab(ready.display);

/** Recordings of the screen, in `dataDir/recordings/`. */
function recorderOf(
  r: NonNullable<WorkerSettings['config']['recording']>,
  dataDir: string,
  grab: Grab,
  budget: FrameBudget,
): Recorder {
  const store = new RecordingStore({
    dir: path.join(dataDir, 'recordings'),
    capBytes: r.capBytes,
    maxAgeMs: r.retentionMs,
  });
  return new Recorder({ store, grab, fps: r.fps, maxBytes: r.capBytes, budget });
}

/** The REST service, the panel and the live view, listening on PORT. */
export const httpStep: StartupStep<Served, Listening> = {
  name: 'http',
  async start(ready) {
    const { config, logger, navigator, secrets, relay } = ready;
    const metrics = new WorkerMetrics({ navigator, captures: ready.captures, media: ready.media });
    const auth = new Authenticator({
      serviceKey: config.serviceKey,
      persona: config.personaName,
      failuresPerMinute: config.authFailuresPerMinute,
      onRefusal: (reason) => metrics.authRefused(reason),
    });
    // Each row of the request log names the credential that made the call (never its secret).
    const tracker = new RequestTracker(new RequestLog(config.dataDir), {
      identify: (req) => auth.identify(req),
    });
    const live = new LiveView({
      vnc: ready.liveVnc,
      navigator,
      auth,
      logger,
      ...config.liveControl,
      onTakeover: () => metrics.takeover(),
    });
    const cdp = new CdpEndpoint({
      navigator,
      auth,
      logger,
      quietRuntime: config.devtoolsQuietRuntime,
      clientBufferBytes: config.devtoolsClientBufferBytes,
      onDropped: () => metrics.devtoolsDropped(),
    });
    metrics.devtoolsFrom(() => cdp.counts());
    const mcp = new McpEndpoint({
      serviceKey: config.serviceKey,
      auth,
      logger,
      version: workerVersion(),
      persona: config.personaName ?? 'worker',
      sessions: config.mcp,
    });
    const recorder = config.recording
      ? recorderOf(
          config.recording,
          config.dataDir,
          screenGrab(ready),
          // RECORDING_MEMORY_MB: one budget for the frames of every recording in the worker.
          new FrameBudget(config.recordingMemoryBytes),
        )
      : undefined;
    // RECORDING_LEASES: a recording from each lease taken to its end.
    const leaseRecordings =
      recorder && config.recording?.leases
        ? new LeaseRecordings({
            recorder,
            leases: navigator.leases,
            withheld: async (pageId) => {
              const pool = navigator.initialized ? navigator.requirePool() : null;
              const page = pool?.has(pageId) ? pool.get(pageId) : null;
              return pixelsWithheld(secrets, page ? await pageTextOf(page) : null);
            },
            logger,
          })
        : null;
    leaseRecordings?.start();
    let commit: Promise<CommitInfo | null> | null = null;
    const server = createServer({
      navigator,
      tracker,
      proxyErrors: new ProxyErrors(config.personaDir, () => relay?.failures ?? 0),
      commit: () => (commit ??= readCommit(config.repoRoot)),
      persona: config.personaName,
      repoRoot: config.repoRoot,
      dataDir: config.dataDir,
      wakerUrl: config.wakerUrl,
      serviceKey: config.serviceKey,
      auth,
      logger,
      version: workerVersion(),
      validateResponses: config.validateResponses,
      allowFileUrls: config.allowFileUrls,
      media: ready.media,
      captures: ready.captures,
      vision: new VisionClient({
        ...config.vision,
        keyGratis: config.visionKeyGratis,
        keyPaga: config.visionKeyPaga,
      }),
      live,
      cdp,
      mcp,
      metrics,
      plugins: {
        found: ready.plugins,
        env: config.env,
        rngFor: pluginRandom(config.pluginSeed),
        secrets,
        bundles: new BundleStore({
          dir: path.join(config.dataDir, 'bundles'),
          capBytes: config.bundleCapBytes,
          maxAgeMs: config.bundleRetentionMs,
        }),
        recorder: config.recording?.calls ? recorder : undefined,
      },
      recordings: recorder?.store,
      shutdown: () => ready.exit('kill endpoint'),
    });
    await listen(server, config.port, config.host);
    const port = boundPort(server, config.port);
    mcp.listening(loopbackUrl(config.host, port));
    logger.info('listening', { host: config.host, port, persona: config.personaDir });
    return { server, tracker, live, cdp, mcp, leaseRecordings };
  },
  stop: ({ server, tracker, live, cdp, mcp, leaseRecordings }) =>
    stopServer(server, async () => {
      // Calls under way get a moment to finish; the live view's sockets close with the rest.
      const deadline = Date.now() + DRAIN_MS;
      while (tracker.activity().in_flight > 0 && Date.now() < deadline) await sleep(50);
      // Agents' sessions end first: their leases are released through the API while it answers.
      await mcp.close();
      // Leases still standing end with the worker: their recordings are written now.
      await leaseRecordings?.stop();
      tracker.abandonAll();
      live.close();
      cdp.close();
    }),
};
