import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

/** One named check a detector page made, as the page reported it. */
export interface Signal {
  name: string;
  pass: boolean;
  detail: unknown;
}

/** What the calls of the page's main-world hooks looked like (see `/own`). */
export interface HookReport {
  /** Calls of hooked DOM functions that the page itself did not make. */
  foreign: Array<{ hook: string; stack: string }>;
  /** The hooks' self-test: a call the page made on purpose was seen. */
  selfTestSeen: boolean;
}

/** What the FingerprintJS page posted: its visitor id and the components a persona decides. */
export interface FingerprintReport {
  visitorId: string;
  components: {
    platform: string;
    timezone: string;
    languages: string[][];
    screenResolution: [number, number];
    vendor: string;
    vendorFlavors: string[];
    userAgentData?: { brands: string[]; platform: string };
    hardwareConcurrency: number;
    dateTimeLocale: string;
  };
  userAgent: string;
  error?: string;
}

/** What the headless-detector page posted: its score (0 to 1) and the check ids it flagged. */
export interface HeadlessDetectorReport {
  score: number;
  detections: string[];
  warnings: string[];
  error?: string;
}

/** The system a user agent, `navigator.platform` or client-hint platform names. */
export function osOf(s: string): string {
  if (/Windows|^Win(32|64)$/.test(s)) return 'Windows';
  if (/Mac/.test(s)) return 'macOS';
  if (/Android/.test(s)) return 'Android';
  if (/Linux|X11/.test(s)) return 'Linux';
  return s === '' ? 'none' : `unknown:${s}`;
}

/**
 * What FingerprintJS' components tell of the persona, for a test to compare with what the
 * persona claims: the system each source names (the user agent, `navigator.platform`, the
 * client hints), the zone, the first language, the screen, the vendor and the brands.
 */
export function fingerprintClaims(r: FingerprintReport): {
  systems: { userAgent: string; platform: string; hints: string };
  timezone: string;
  language: string | undefined;
  dateTimeLocale: string;
  screen: [number, number];
  vendor: string;
  flavors: string[];
  brands: string[];
} {
  const c = r.components;
  return {
    systems: {
      userAgent: osOf(r.userAgent),
      platform: osOf(c.platform),
      hints: osOf(c.userAgentData?.platform ?? ''),
    },
    timezone: c.timezone,
    language: c.languages[0]?.[0],
    dateTimeLocale: c.dateTimeLocale,
    screen: c.screenResolution,
    vendor: c.vendor,
    flavors: c.vendorFlavors,
    brands: c.userAgentData?.brands ?? [],
  };
}

export interface DetectorSite {
  url: string;
  /** The latest report a page posted under `name` (`own`, `hooks`, `botd`, `fpscanner`, `fingerprintjs`,
   * `headless-detector`). */
  waitFor<T>(name: string, timeoutMs?: number): Promise<T>;
  /** The headers of the latest request for `pathname`, or null when none came. */
  headersOf(pathname: string): http.IncomingHttpHeaders | null;
  /** Forgets the reports, before the same pages are opened in another browser. */
  reset(): void;
  /** Forgets the report posted under `name` only, before its page is opened again. */
  forget(name: string): void;
  close(): Promise<void>;
}

const VENDOR: Record<string, string> = {
  // BotD (FingerprintJS) and fpscanner as published on the registry, served from loopback.
  '/vendor/botd.js': require.resolve('@fingerprintjs/botd/dist/botd.esm.js'),
  '/vendor/fpscanner.js': path.join(
    path.dirname(require.resolve('fpscanner/package.json')),
    'dist/fpScanner.es.js',
  ),
  // The open-source FingerprintJS and headless-detector, as published on the registry.
  '/vendor/fingerprintjs.js': require.resolve('@fingerprintjs/fingerprintjs/dist/fp.esm.js'),
  '/vendor/headless-detector.js': path.join(
    path.dirname(require.resolve('headless-detector/package.json')),
    'scripts/headless-detector.js',
  ),
};

/**
 * The detector's own checks, run in the page's main world as a site's script runs. Each check
 * names the signal it reads; the page posts them to `/report/own`. Its hooks on DOM reads then
 * watch for anyone else reading the document through the main world, and post what they saw to
 * `/report/hooks` every half second.
 */
const OWN_SCRIPT = String.raw`
const post = (name, body) => fetch('/report/' + name, { method: 'POST', body: JSON.stringify(body) });
const own = { calling: 0, seen: [], selfTestSeen: false };
// Hooks first, before anything else can read the document.
(() => {
  const hook = (target, key, kind, label) => {
    const d = Object.getOwnPropertyDescriptor(target, key);
    const original = d[kind];
    const wrapped = {
      [kind === 'value' ? key : 'get ' + key](...args) {
        if (own.calling > 0) { if (label === 'XMLSerializer.serializeToString') own.selfTestSeen = true; }
        else own.seen.push({ hook: label, stack: String(new Error().stack) });
        return original.apply(this, args);
      },
    }[kind === 'value' ? key : 'get ' + key];
    Object.defineProperty(target, key, { ...d, [kind]: wrapped });
  };
  hook(Document.prototype, 'querySelector', 'value', 'document.querySelector');
  hook(Document.prototype, 'querySelectorAll', 'value', 'document.querySelectorAll');
  hook(Element.prototype, 'querySelector', 'value', 'Element.querySelector');
  hook(Element.prototype, 'querySelectorAll', 'value', 'Element.querySelectorAll');
  hook(Element.prototype, 'getBoundingClientRect', 'value', 'Element.getBoundingClientRect');
  hook(Element.prototype, 'outerHTML', 'get', 'Element.outerHTML');
  hook(Document.prototype, 'title', 'get', 'document.title');
  hook(XMLSerializer.prototype, 'serializeToString', 'value', 'XMLSerializer.serializeToString');
  // Self-test: a read the page makes on purpose reaches the hook.
  own.calling++;
  new XMLSerializer().serializeToString(document.createElement('i'));
  own.calling--;
})();
setInterval(() => post('hooks', { foreign: own.seen, selfTestSeen: own.selfTestSeen }), 500);

const osOf = (s) => /Windows|^Win(32|64)$/.test(s) ? 'Windows' : /Mac/.test(s) ? 'macOS' : /Android/.test(s) ? 'Android'
  : /CrOS/.test(s) ? 'ChromeOS' : /Linux|X11/.test(s) ? 'Linux' : 'unknown:' + s;
const majorOf = (ua) => (/Chrome\/(\d+)/.exec(ua) || [])[1];

const WORKER_SOURCE = 'onmessage = async () => {' +
  'let gl = null; try { const c = new OffscreenCanvas(8, 8).getContext("webgl");' +
  ' const e = c && c.getExtension("WEBGL_debug_renderer_info");' +
  ' gl = c ? [e ? c.getParameter(e.UNMASKED_VENDOR_WEBGL) : c.getParameter(c.VENDOR), e ? c.getParameter(e.UNMASKED_RENDERER_WEBGL) : c.getParameter(c.RENDERER)] : null; } catch (err) { gl = "error " + err; }' +
  'const d = navigator.userAgentData;' +
  'const high = d ? await d.getHighEntropyValues(["platform", "fullVersionList", "uaFullVersion"]) : null;' +
  'postMessage({ ua: navigator.userAgent, platform: navigator.platform, uaPlatform: d && d.platform, high,' +
  ' cores: navigator.hardwareConcurrency, memory: navigator.deviceMemory, languages: navigator.languages,' +
  ' language: navigator.language, webdriver: navigator.webdriver, gl,' +
  ' locale: Intl.DateTimeFormat().resolvedOptions().locale, timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone }); };';

function inWorker() {
  return new Promise((resolve) => {
    const w = new Worker(URL.createObjectURL(new Blob([WORKER_SOURCE], { type: 'text/javascript' })));
    w.onmessage = (e) => resolve(e.data);
    w.onerror = (e) => resolve({ error: String(e.message) });
    w.postMessage(0);
  });
}

function pageGl() {
  const c = document.createElement('canvas').getContext('webgl');
  if (!c) return null;
  const e = c.getExtension('WEBGL_debug_renderer_info');
  return [e ? c.getParameter(e.UNMASKED_VENDOR_WEBGL) : c.getParameter(c.VENDOR),
    e ? c.getParameter(e.UNMASKED_RENDERER_WEBGL) : c.getParameter(c.RENDERER)];
}

/**
 * Whether a DevTools client with the Runtime domain on is attached: it serialises what the
 * console is given, and so asks V8 for an Error's stack (formatted through
 * Error.prepareStackTrace) or reads a watched stack property. No client, no read.
 */
function runtimeEnableProbe() {
  return new Promise((resolve) => {
    let prepared = false;
    let getter = false;
    const previous = Error.prepareStackTrace;
    Error.prepareStackTrace = (error, frames) => { prepared = true; return previous ? previous(error, frames) : String(error); };
    try { console.debug(new Error('probe')); } finally { Error.prepareStackTrace = previous; }
    const e = new Error('probe');
    Object.defineProperty(e, 'stack', { configurable: true, get() { getter = true; return ''; } });
    console.debug(e);
    setTimeout(() => resolve({ prepareStackTrace: prepared, stack_getter: getter }), 300);
  });
}

async function checks() {
  const signals = [];
  const add = (name, pass, detail) => signals.push({ name, pass: Boolean(pass), detail });
  own.calling++;
  const frame = document.createElement('iframe');
  frame.srcdoc = '<p>frame</p>';
  document.body.appendChild(frame);
  await new Promise((r) => frame.complete || frame.contentDocument?.readyState === 'complete' ? r() : frame.addEventListener('load', r, { once: true }));
  const fw = frame.contentWindow;
  // A fresh realm's own Function.prototype.toString: a proxy shows as an anonymous function.
  const realmToString = fw.Function.prototype.toString;
  own.calling--;

  const worker = await inWorker();

  // webdriver
  const wdDesc = Object.getOwnPropertyDescriptor(Navigator.prototype, 'webdriver');
  add('webdriver', navigator.webdriver === false && worker.webdriver !== true &&
      !Object.getOwnPropertyDescriptor(navigator, 'webdriver') && wdDesc && wdDesc.get &&
      realmToString.call(wdDesc.get) === 'function get webdriver() { [native code] }',
    { page: navigator.webdriver, worker: String(worker.webdriver), getter: wdDesc && wdDesc.get && realmToString.call(wdDesc.get) });

  // runtime_enable
  const runtime = await runtimeEnableProbe();
  add('runtime_enable', !runtime.prepareStackTrace && !runtime.stack_getter, runtime);

  // ua_consistency
  const d = navigator.userAgentData;
  const high = d ? await d.getHighEntropyValues(['platform', 'fullVersionList', 'uaFullVersion']) : null;
  const major = majorOf(navigator.userAgent);
  const oses = { ua: osOf(navigator.userAgent), platform: osOf(navigator.platform), hints: d && osOf(d.platform),
    high: high && osOf(high.platform), worker_ua: osOf(worker.ua || ''), worker_platform: osOf(worker.platform || ''),
    worker_hints: worker.uaPlatform && osOf(worker.uaPlatform) };
  const brands = d ? d.brands.map((b) => b.brand + '/' + b.version) : [];
  const full = high ? high.fullVersionList.map((b) => b.brand + '/' + b.version) : [];
  const realBrand = (list) => list.some((b) => /^(Google Chrome|Chromium)\/(\d+)/.test(b) && b.split('/')[1].split('.')[0] === major);
  add('ua_consistency', new Set(Object.values(oses)).size === 1 && worker.ua === navigator.userAgent &&
      !/Headless/.test(navigator.userAgent) && realBrand(brands) && realBrand(full) &&
      high && String(high.uaFullVersion).split('.')[0] === major &&
      JSON.stringify(worker.high && worker.high.fullVersionList) === JSON.stringify(high.fullVersionList),
    { oses, ua: navigator.userAgent, brands, full, uaFullVersion: high && high.uaFullVersion });

  // hardware
  add('hardware', navigator.hardwareConcurrency === worker.cores && navigator.deviceMemory === worker.memory,
    { page: [navigator.hardwareConcurrency, navigator.deviceMemory], worker: [worker.cores, worker.memory] });

  // webgl
  const gl = pageGl();
  add('webgl', gl !== null && Array.isArray(worker.gl) && JSON.stringify(gl) === JSON.stringify(worker.gl),
    { page: gl, worker: worker.gl });

  // languages
  const intl = Intl.DateTimeFormat().resolvedOptions();
  add('languages', JSON.stringify(navigator.languages) === JSON.stringify(worker.languages) &&
      navigator.language === navigator.languages[0] &&
      intl.locale.split('-')[0] === navigator.languages[0].split('-')[0] && worker.locale === intl.locale,
    { page: navigator.languages, worker: worker.languages, intl: intl.locale, worker_intl: worker.locale });

  // timezone
  add('timezone', !/^(UTC|Etc\/UTC|Etc\/GMT)$/.test(intl.timeZone) && worker.timeZone === intl.timeZone,
    { page: intl.timeZone, worker: worker.timeZone });

  // screen
  add('screen', screen.availHeight < screen.height && outerHeight > innerHeight && outerWidth >= innerWidth &&
      screen.width >= outerWidth,
    { screen: [screen.width, screen.height], avail: [screen.availWidth, screen.availHeight],
      outer: [outerWidth, outerHeight], inner: [innerWidth, innerHeight] });

  // plugins: a desktop Chrome lists its PDF viewer
  add('plugins', navigator.pdfViewerEnabled === true && navigator.plugins.length > 0 && navigator.mimeTypes.length > 0,
    { pdfViewerEnabled: navigator.pdfViewerEnabled, plugins: navigator.plugins.length, mimeTypes: navigator.mimeTypes.length });

  // native_functions: what evasions patch must stringify as a named native function in a fresh
  // realm, have no prototype and no extra own keys (a Proxy or a replacement shows in one)
  const getter = (proto, key) => Object.getOwnPropertyDescriptor(proto, key).get;
  const fns = {
    'permissions.query': Permissions.prototype.query,
    'WebGLRenderingContext.getParameter': WebGLRenderingContext.prototype.getParameter,
    'Function.toString': Function.prototype.toString,
    'HTMLMediaElement.canPlayType': HTMLMediaElement.prototype.canPlayType,
    'get hardwareConcurrency': getter(Navigator.prototype, 'hardwareConcurrency'),
    'get languages': getter(Navigator.prototype, 'languages'),
    'get plugins': getter(Navigator.prototype, 'plugins'),
    'get userAgent': getter(Navigator.prototype, 'userAgent'),
    'get vendor': getter(Navigator.prototype, 'vendor'),
    'get contentWindow': getter(HTMLIFrameElement.prototype, 'contentWindow'),
  };
  const lies = [];
  for (const [label, fn] of Object.entries(fns)) {
    const name = fn.name;
    const text = realmToString.call(fn);
    const keys = Object.getOwnPropertyNames(fn).sort().join(',');
    const why = [];
    if (text !== 'function ' + name + '() { [native code] }') why.push('realm toString: ' + text);
    if (Function.prototype.toString.call(fn) !== text) why.push('toString differs across realms');
    if (keys !== 'length,name') why.push('own keys: ' + keys);
    if ('prototype' in fn) why.push('has a prototype');
    if (why.length) lies.push({ fn: label, why });
  }
  add('native_functions', lies.length === 0, { lies });

  // iframe: a real window, consistent with the page
  own.calling++;
  const iframeOk = fw.self === fw && fw.navigator.webdriver === false &&
    fw.navigator.userAgent === navigator.userAgent && typeof fw.chrome === typeof window.chrome &&
    JSON.stringify(fw.navigator.languages) === JSON.stringify(navigator.languages) &&
    fw.navigator.hardwareConcurrency === navigator.hardwareConcurrency;
  const iframeDetail = { self: fw.self === fw, webdriver: fw.navigator.webdriver, chrome: typeof fw.chrome,
    cores: fw.navigator.hardwareConcurrency };
  own.calling--;
  add('iframe', iframeOk, iframeDetail);

  // chrome_object: present as in a desktop Chrome, with native members only
  const members = window.chrome ? Object.keys(window.chrome) : [];
  const fakes = members.filter((k) => typeof window.chrome[k] === 'function' &&
    realmToString.call(window.chrome[k]) !== 'function ' + window.chrome[k].name + '() { [native code] }');
  add('chrome_object', typeof window.chrome === 'object' && fakes.length === 0, { members, fakes });
  return signals;
}
addEventListener('DOMContentLoaded', () => checks().then((signals) => post('own', signals),
  (err) => post('own', [{ name: 'error', pass: false, detail: String(err && err.stack || err) }])));
`;

const OWN_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>detector</title>
<script>${OWN_SCRIPT}</script></head>
<body><h1>Detector</h1><p id="text">A page that watches who reads it.</p>
<button id="btn" style="margin:40px;padding:12px 30px">Press</button>
<input id="field" style="margin:40px" placeholder="type here">
</body></html>`;

const BOTD_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>botd</title></head><body>
<h1>BotD</h1>
<script type="module">
import { load } from '/vendor/botd.js';
const post = (body) => fetch('/report/botd', { method: 'POST', body: JSON.stringify(body) });
try {
  const botd = await load({ monitoring: false });
  const result = botd.detect();
  const detections = botd.getDetections();
  const flagged = Object.entries(detections).filter(([, v]) => v.bot).map(([k, v]) => k + (v.botKind ? ':' + v.botKind : ''));
  post({ bot: result.bot, botKind: result.botKind ?? null, flagged });
} catch (err) {
  post({ error: String(err) });
}
</script></body></html>`;

const FPSCANNER_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>fpscanner</title></head><body>
<h1>fpscanner</h1>
<script type="module">
import FingerprintScanner from '/vendor/fpscanner.js';
const post = (body) => fetch('/report/fpscanner', { method: 'POST', body: JSON.stringify(body) });
try {
  const fp = await new FingerprintScanner().collectFingerprint({ encrypt: false });
  post({ bot: fp.fastBotDetection, details: fp.fastBotDetectionDetails });
} catch (err) {
  post({ error: String(err && err.stack || err) });
}
</script></body></html>`;

/**
 * FingerprintJS (open source, 5.x) gives no verdict: it fingerprints. The page posts its
 * visitor id and the components a persona's claims decide, beside the user agent they must
 * agree with; the test opens it twice to see the id stay.
 */
const FINGERPRINTJS_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>fingerprintjs</title></head><body>
<h1>FingerprintJS</h1>
<script type="module">
import FingerprintJS from '/vendor/fingerprintjs.js';
const post = (body) => fetch('/report/fingerprintjs', { method: 'POST', body: JSON.stringify(body) });
try {
  const agent = await FingerprintJS.load({ monitoring: false });
  const { visitorId, components } = await agent.get();
  const pick = {};
  for (const key of ['platform', 'timezone', 'languages', 'screenResolution', 'vendor', 'vendorFlavors',
    'userAgentData', 'hardwareConcurrency', 'pdfViewerEnabled', 'dateTimeLocale']) {
    const c = components[key];
    pick[key] = c && 'value' in c ? c.value : { error: String(c && c.error) };
  }
  post({ visitorId, components: pick, userAgent: navigator.userAgent });
} catch (err) {
  post({ error: String(err && err.stack || err) });
}
</script></body></html>`;

/** headless-detector (npm): its score from 0 (a person's browser) to 1, and what it found. */
const HEADLESS_DETECTOR_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>headless-detector</title>
<script src="/vendor/headless-detector.js"></script></head><body>
<h1>headless-detector</h1>
<script>
const post = (body) => fetch('/report/headless-detector', { method: 'POST', body: JSON.stringify(body) });
addEventListener('load', () => window.detectHeadless().then((r) => post({
  score: r.isHeadless,
  detections: r.summary.detections.map((d) => d.checkId),
  warnings: r.summary.warnings.map((d) => d.checkId),
}), (err) => post({ error: String(err && err.stack || err) })));
</script></body></html>`;

/** What the `/brand` page posted: the brands told and what a Google Chrome would also have. */
export interface BrandReport {
  brands: string[];
  /** `Sec-CH-UA` names Google Chrome: rebrowser-bot-detector's criterion (a Chromium fails it). */
  claimsGoogleChrome: boolean;
  /** `requestMediaKeySystemAccess('com.widevine.alpha', …)` resolved: Google's CDM is there. */
  widevine: boolean;
  widevineError: string | null;
  /** H.264 and AAC in MP4, as `MediaSource.isTypeSupported` and `canPlayType` answer. */
  h264: { mse: boolean; canPlay: string };
  aac: { mse: boolean; canPlay: string };
  /** Speech synthesis voices, and how many are Google's own network voices. */
  voices: number;
  googleVoices: number;
  /** WebRTC can send H.264 (`RTCRtpSender.getCapabilities`). */
  rtcH264: boolean;
  error?: string;
}

/**
 * `/brand`: the brand the page is told, and the features a claim of Google Chrome would be
 * checked against: Widevine, the proprietary codecs, Google's speech voices, WebRTC's H.264.
 */
const BRAND_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>brand</title></head><body>
<h1>brand</h1>
<script>
const post = (body) => fetch('/report/brand', { method: 'POST', body: JSON.stringify(body) });
(async () => {
  const d = navigator.userAgentData;
  const brands = d ? d.brands.map((b) => b.brand + '/' + b.version) : [];
  let widevine = false;
  let widevineError = null;
  try {
    await navigator.requestMediaKeySystemAccess('com.widevine.alpha', [
      { initDataTypes: ['cenc'], videoCapabilities: [{ contentType: 'video/mp4; codecs="avc1.42E01E"' }] },
      { initDataTypes: ['webm'], videoCapabilities: [{ contentType: 'video/webm; codecs="vp9"' }] },
    ]);
    widevine = true;
  } catch (err) {
    widevineError = err.name + ': ' + err.message;
  }
  const v = document.createElement('video');
  const codec = (type) => ({ mse: MediaSource.isTypeSupported(type), canPlay: v.canPlayType(type) });
  const voices = await new Promise((resolve) => {
    const now = speechSynthesis.getVoices();
    if (now.length) return resolve(now);
    speechSynthesis.onvoiceschanged = () => resolve(speechSynthesis.getVoices());
    setTimeout(() => resolve(speechSynthesis.getVoices()), 1500);
  });
  post({
    brands,
    claimsGoogleChrome: brands.some((b) => b.startsWith('Google Chrome/')),
    widevine,
    widevineError,
    h264: codec('video/mp4; codecs="avc1.42E01E"'),
    aac: codec('audio/mp4; codecs="mp4a.40.2"'),
    voices: voices.length,
    googleVoices: voices.filter((x) => /^Google /.test(x.name)).length,
    rtcH264: RTCRtpSender.getCapabilities('video').codecs.some((c) => /h264/i.test(c.mimeType)),
  });
})().catch((err) => post({ error: String(err && err.stack || err) }));
</script></body></html>`;

/** What a context tells of its system, the same code in a frame and in workers. */
const SYSTEM = `const system = () => ({ ua: navigator.userAgent, platform: navigator.platform,
  hint: navigator.userAgentData ? navigator.userAgentData.platform : null,
  brands: navigator.userAgentData ? navigator.userAgentData.brands.map((b) => b.brand + '/' + b.version) : null });`;
const NESTED_WORKER = `${SYSTEM}
const inner = new Worker(URL.createObjectURL(new Blob([${JSON.stringify(`${SYSTEM} postMessage(system());`)}], { type: 'text/javascript' })));
inner.onmessage = (e) => postMessage({ ...system(), inner: e.data });`;

/**
 * `/cross` embeds `/frame` from another site (localhost against 127.0.0.1: the frame runs in
 * a process of its own). The frame reports what it, its worker and that worker's own worker
 * tell of their system to `/report/frame`.
 */
const crossPage = (port: number): string => `<!doctype html><html><head><meta charset="utf-8">
<title>cross</title></head><body><iframe src="http://localhost:${port}/frame"></iframe></body></html>`;
const FRAME_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>frame</title></head><body>
<script>
${SYSTEM}
const worker = new Worker(URL.createObjectURL(new Blob([${JSON.stringify(NESTED_WORKER)}], { type: 'text/javascript' })));
worker.onmessage = (e) => fetch('/report/frame', { method: 'POST', body: JSON.stringify({ ...system(), worker: e.data }) });
</script></body></html>`;

/**
 * `/workers` starts a shared worker and registers a service worker; each first fetches
 * `/seen-shared` or `/seen-service` (the site keeps the request's headers), then tells its
 * system. The page reports both to `/report/workers`.
 */
const SHARED_WORKER = `${SYSTEM}
onconnect = (e) => fetch('/seen-shared').then(() => e.ports[0].postMessage(system()));`;
const SERVICE_WORKER = `${SYSTEM}
self.addEventListener('message', (e) => e.waitUntil(fetch('/seen-service').then(() => e.source.postMessage(system()))));`;
const WORKERS_PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>workers</title></head><body>
<script>
(async () => {
  const shared = await new Promise((resolve) => {
    const w = new SharedWorker('/shared-worker.js');
    w.port.onmessage = (e) => resolve(e.data);
    w.port.start();
  });
  const reg = await navigator.serviceWorker.register('/service-worker.js');
  await navigator.serviceWorker.ready;
  const service = await new Promise((resolve) => {
    navigator.serviceWorker.onmessage = (e) => resolve(e.data);
    reg.active.postMessage(0);
  });
  fetch('/report/workers', { method: 'POST', body: JSON.stringify({ shared, service }) });
})().catch((err) => fetch('/report/workers', { method: 'POST', body: JSON.stringify({ error: String(err) }) }));
</script></body></html>`;

/**
 * The detector site on 127.0.0.1: `/own` (this product's own checks, one per named signal, and
 * main-world hooks on DOM reads), `/botd` (FingerprintJS BotD), `/fpscanner` (fpscanner),
 * `/fingerprintjs` (FingerprintJS, open source) and `/headless-detector` (headless-detector),
 * the public detectors as installed from the registry, and `/brand` (what a brand claim is
 * checked against). Pages post what they found to
 * `/report/<name>`; the test reads it from here, never by evaluating anything in the page.
 */
export async function startDetectorSite(): Promise<DetectorSite> {
  let reports = new Map<string, unknown>();
  let headers = new Map<string, http.IncomingHttpHeaders>();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    headers.set(url.pathname, req.headers);
    const send = (status: number, type: string, body: string | Buffer): void => {
      res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (req.method === 'POST' && url.pathname.startsWith('/report/')) {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        try {
          reports.set(
            url.pathname.slice('/report/'.length),
            JSON.parse(Buffer.concat(chunks).toString()),
          );
          send(204, 'text/plain', '');
        } catch {
          send(400, 'text/plain', 'not JSON');
        }
      });
      return;
    }
    const vendor = VENDOR[url.pathname];
    if (vendor) return send(200, 'text/javascript', fs.readFileSync(vendor));
    if (url.pathname === '/own') return send(200, 'text/html; charset=utf-8', OWN_PAGE);
    if (url.pathname === '/botd') return send(200, 'text/html; charset=utf-8', BOTD_PAGE);
    if (url.pathname === '/fpscanner') return send(200, 'text/html; charset=utf-8', FPSCANNER_PAGE);
    if (url.pathname === '/brand') return send(200, 'text/html; charset=utf-8', BRAND_PAGE);
    if (url.pathname === '/fingerprintjs')
      return send(200, 'text/html; charset=utf-8', FINGERPRINTJS_PAGE);
    if (url.pathname === '/headless-detector')
      return send(200, 'text/html; charset=utf-8', HEADLESS_DETECTOR_PAGE);
    if (url.pathname === '/cross') return send(200, 'text/html; charset=utf-8', crossPage(port));
    if (url.pathname === '/frame') return send(200, 'text/html; charset=utf-8', FRAME_PAGE);
    if (url.pathname === '/workers') return send(200, 'text/html; charset=utf-8', WORKERS_PAGE);
    if (url.pathname === '/shared-worker.js') return send(200, 'text/javascript', SHARED_WORKER);
    if (url.pathname === '/service-worker.js') return send(200, 'text/javascript', SERVICE_WORKER);
    if (url.pathname.startsWith('/seen-')) return send(204, 'text/plain', '');
    if (url.pathname === '/favicon.ico') return send(204, 'text/plain', '');
    send(404, 'text/plain', 'no such page');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async waitFor<T>(name: string, timeoutMs = 30_000): Promise<T> {
      const until = Date.now() + timeoutMs;
      while (!reports.has(name)) {
        if (Date.now() > until) throw new Error(`no ${name} report within ${timeoutMs} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
      return reports.get(name) as T;
    },
    headersOf: (pathname) => headers.get(pathname) ?? null,
    reset() {
      reports = new Map();
      headers = new Map();
    },
    forget(name) {
      reports.delete(name);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
