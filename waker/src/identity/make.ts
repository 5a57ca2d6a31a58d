import { randomInt } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import Joi from 'joi';
import { identitySchema } from '@persona-browser/contracts';
import type { ProxyIdentity } from '@persona-browser/contracts';
import { localeFor } from './locale';

/**
 * A proxy identity could not be made: one line for the log, the API and the client that woke
 * the persona. It never holds the proxy password or the GeoIP token.
 */
export class IdentityError extends Error {}

export const DEFAULT_USERNAME_TEMPLATE = '{username}-country-{country}-session-{session}';
export const DEFAULT_PROXY_SERVER = 'http://brd.superproxy.io:33335';
export const DEFAULT_GEOIP_BASE_URL = 'https://ipinfo.io';
export const GEOIP_TIMEOUT_MS = 15_000;
const SESSION_LENGTH = 10;
const ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';
/** A GeoIP answer is a few hundred bytes; anything this large is not one. */
const MAX_ANSWER_BYTES = 64 * 1024;

export interface MakeIdentityOptions {
  /** ISO 3166-1 alpha-2, upper case (PROXY_COUNTRY). */
  country: string;
  /** `http://host:port` of the proxy gateway (PROXY_SERVER). */
  proxyServer: string;
  /** PROXY_USERNAME_TEMPLATE; default {@link DEFAULT_USERNAME_TEMPLATE}. */
  usernameTemplate?: string;
  /** The proxy account (PROXY_USERNAME, PROXY_PASSWORD). */
  username: string;
  password: string;
  /** GEOIP_BASE_URL: `http(s)://host[:port][/base]`; the lookup is `GET {base}/json`. */
  geoipBaseUrl: string;
  geoipToken?: string | null;
  /** The whole lookup, proxy connection included; default 15 s. */
  timeoutMs?: number;
  /** Extra trusted certificates for an https GeoIP service (a private one, the tests). */
  ca?: string | Buffer;
  /** The session id; default a new random one (tests pass their own). */
  session?: string;
}

/** What the GeoIP service told about the exit (ipinfo.io's `/json`, the fields used). */
export interface GeoipAnswer {
  ip: string;
  /** Upper case. */
  country: string;
  timezone: string;
  latitude: number;
  longitude: number;
}

/** A new proxy session id: 10 random lower-case letters and digits. */
export function newSession(): string {
  let s = '';
  for (let i = 0; i < SESSION_LENGTH; i++) s += ALNUM[randomInt(ALNUM.length)];
  return s;
}

const PLACEHOLDER = /\{([^{}]*)\}/g;
const KNOWN = new Set(['username', 'country', 'session']);

/**
 * Why a PROXY_USERNAME_TEMPLATE cannot be used, or null: it must hold `{session}` (a new
 * session per wake is the point) and no placeholder but `{username}`, `{country}`,
 * `{session}`.
 */
export function templateProblem(template: string): string | null {
  for (const m of template.matchAll(PLACEHOLDER)) {
    if (!KNOWN.has(m[1] ?? '')) {
      return `unknown placeholder {${m[1]}}: use {username}, {country} and {session}`;
    }
  }
  if (!template.includes('{session}')) return 'must hold {session}';
  return null;
}

/** The session's proxy user name: the template filled in, the country in lower case. */
export function sessionUsername(
  template: string,
  values: { username: string; country: string; session: string },
): string {
  const filled: Record<string, string> = {
    username: values.username,
    country: values.country.toLowerCase(),
    session: values.session,
  };
  return template.replace(PLACEHOLDER, (all, name: string) => filled[name] ?? all);
}

/** `{base}/json`, with `?token=` when there is a token. */
export function geoipUrl(base: string, token?: string | null): URL {
  const url = new URL(`${base.replace(/\/+$/, '')}/json`);
  if (token) url.searchParams.set('token', token);
  return url;
}

const TIMEZONE = /^[A-Za-z_]+(\/[A-Za-z0-9_+-]+)*$/;
const LOC = /^\s*(-?\d{1,3}(?:\.\d+)?)\s*,\s*(-?\d{1,3}(?:\.\d+)?)\s*$/;

/** The fields of an answer the identity is made from, as the schema gives them. */
interface GeoipFields {
  ip: string;
  country: string;
  loc: string;
  timezone: string;
}

const answerSchema = Joi.object<GeoipFields, true>({
  ip: Joi.string().ip({ cidr: 'forbidden' }).required(),
  country: Joi.string()
    .pattern(/^[A-Za-z]{2}$/)
    .required(),
  loc: Joi.string().pattern(LOC).required(),
  timezone: Joi.string().pattern(TIMEZONE).required(),
})
  .unknown(true)
  .required();

/**
 * Reads an ipinfo-like answer `{ip, country, loc: "lat,lon", timezone}`. Throws one line
 * naming the field; values are never quoted.
 */
export function parseGeoipAnswer(body: unknown): GeoipAnswer {
  const result = answerSchema.validate(body, {
    abortEarly: true,
    errors: { wrap: { label: false } },
    messages: {
      'string.pattern.base': '{{#label}} does not have the expected format',
      'string.ip': '{{#label}} is not an IP address',
      'object.base': 'the answer is not a JSON object',
    },
  });
  if (result.error) {
    const detail = result.error.details[0];
    const field = detail && detail.path.length ? `field ${detail.path.join('.')}: ` : '';
    throw new IdentityError(`GeoIP answer is invalid: ${field}${detail?.message ?? 'bad answer'}`);
  }
  const v = result.value;
  const m = LOC.exec(v.loc);
  if (!m)
    throw new IdentityError('GeoIP answer is invalid: field loc does not have the expected format');
  const latitude = Number(m[1]);
  const longitude = Number(m[2]);
  if (Math.abs(latitude) > 90 || Math.abs(longitude) > 180) {
    throw new IdentityError('GeoIP answer is invalid: field loc: coordinates out of range');
  }
  return { ip: v.ip, country: v.country.toUpperCase(), timezone: v.timezone, latitude, longitude };
}

/** `user:password` as a Basic credential. */
const basic = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** What a refused or broken connection to the proxy is called, by its error code. */
function proxyConnectError(err: NodeJS.ErrnoException, where: string): IdentityError {
  switch (err.code) {
    case 'ECONNREFUSED':
      return new IdentityError(`proxy ${where} refused the connection`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new IdentityError(`proxy ${where}: host not found`);
    case 'ECONNRESET':
    case 'EPIPE':
      return new IdentityError(`proxy ${where} closed the connection`);
    default:
      return new IdentityError(`proxy ${where} failed: ${err.code ?? 'connection error'}`);
  }
}

interface LookupTarget {
  proxy: URL;
  authorization: string;
  url: URL;
  timeoutMs: number;
  ca?: string | Buffer;
}

/**
 * `GET url` through the proxy with the session's credentials: an http URL as an absolute-form
 * request to the proxy, an https one through a CONNECT tunnel and TLS to the service. Resolves
 * with the parsed JSON of a 200; throws an IdentityError otherwise.
 */
function lookupThroughProxy(t: LookupTarget): Promise<unknown> {
  const proxyHost = t.proxy.hostname.replace(/^\[|\]$/g, '');
  const proxyPort = Number(t.proxy.port || 80);
  const where = `${t.proxy.hostname}:${proxyPort}`;
  const targetHost = t.url.hostname.replace(/^\[|\]$/g, '');
  const https = t.url.protocol === 'https:';
  const targetPort = Number(t.url.port || (https ? 443 : 80));
  const headers = {
    host: t.url.host,
    accept: 'application/json',
    'user-agent': 'persona-browser-waker',
    connection: 'close',
  };
  const opened: Array<{ destroy(): void }> = [];

  return new Promise<unknown>((resolve, reject) => {
    let done = false;
    const finish = (err: Error | null, value?: unknown): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      for (const o of opened) o.destroy();
      if (err) reject(err);
      else resolve(value);
    };
    const limit = t.timeoutMs >= 1000 ? `${Math.round(t.timeoutMs / 1000)} s` : `${t.timeoutMs} ms`;
    const timer = setTimeout(
      () => finish(new IdentityError(`GeoIP lookup timed out after ${limit}`)),
      t.timeoutMs,
    );

    const onAnswer = (res: http.IncomingMessage, via: string): void => {
      const status = res.statusCode ?? 0;
      if (status === 407) {
        finish(new IdentityError('proxy refused the session (407)'));
        return;
      }
      if (status !== 200) {
        finish(new IdentityError(`GeoIP lookup ${via} answered HTTP ${status}`));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > MAX_ANSWER_BYTES) finish(new IdentityError('GeoIP answer is too large'));
        else chunks.push(c);
      });
      res.on('end', () => {
        try {
          finish(null, JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch {
          finish(new IdentityError('GeoIP answer is not JSON'));
        }
      });
      res.on('error', (err: NodeJS.ErrnoException) =>
        finish(new IdentityError(`GeoIP answer broke off: ${err.code ?? 'error'}`)),
      );
    };

    if (!https) {
      // Absolute form: the proxy reads the target from the request line.
      const req = http.request({
        host: proxyHost,
        port: proxyPort,
        method: 'GET',
        path: t.url.href,
        agent: false,
        headers: { ...headers, 'proxy-authorization': t.authorization },
      });
      opened.push(req);
      req.on('response', (res) => onAnswer(res, 'through the proxy'));
      req.on('error', (err: NodeJS.ErrnoException) => finish(proxyConnectError(err, where)));
      req.end();
      return;
    }

    const authority = `${net.isIPv6(targetHost) ? `[${targetHost}]` : targetHost}:${targetPort}`;
    const connect = http.request({
      host: proxyHost,
      port: proxyPort,
      method: 'CONNECT',
      path: authority,
      agent: false,
      headers: { host: authority, 'proxy-authorization': t.authorization },
    });
    opened.push(connect);
    connect.on('error', (err: NodeJS.ErrnoException) => finish(proxyConnectError(err, where)));
    connect.on('response', (res: http.IncomingMessage) => {
      // A proxy that answers CONNECT with a plain response (no tunnel) refused it.
      const status = res.statusCode ?? 0;
      finish(
        new IdentityError(
          status === 407
            ? 'proxy refused the session (407)'
            : `proxy answered CONNECT with HTTP ${status}`,
        ),
      );
    });
    connect.on('connect', (res: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
      opened.push(socket);
      const status = res.statusCode ?? 0;
      if (status !== 200) {
        finish(
          new IdentityError(
            status === 407
              ? 'proxy refused the session (407)'
              : `proxy answered CONNECT with HTTP ${status}`,
          ),
        );
        return;
      }
      if (head.length) socket.unshift(head);
      const secure = tls.connect({
        socket,
        // The name the certificate must hold (an address too), and SNI for a host name.
        host: targetHost,
        servername: net.isIP(targetHost) ? undefined : targetHost,
        ...(t.ca ? { ca: [...tls.rootCertificates, t.ca.toString()] } : {}),
      });
      opened.push(secure);
      secure.on('error', (err: Error) =>
        finish(new IdentityError(`GeoIP TLS through the proxy failed: ${err.message}`)),
      );
      const req = http.request({
        method: 'GET',
        path: `${t.url.pathname}${t.url.search}`,
        headers,
        // No agent: with one, Node would open its own connection instead of the tunnel.
        createConnection: () => secure,
      });
      opened.push(req);
      req.on('response', (r) => onAnswer(r, 'through the proxy'));
      req.on('error', (err: NodeJS.ErrnoException) =>
        finish(new IdentityError(`GeoIP lookup through the proxy failed: ${err.code ?? 'error'}`)),
      );
      req.end();
    });
    connect.end();
  });
}

/** `message` with every secret replaced (a last guard: no message is meant to hold one). */
function scrub(message: string, secrets: Array<string | null | undefined>): string {
  let out = message;
  for (const s of secrets) if (s) out = out.split(s).join('[redacted]');
  return out;
}

/**
 * A fresh proxy identity for one wake: a new session, its user name from the template, and a
 * GeoIP lookup made through that very session, so the identity describes the exit the browser
 * will use. The exit must be in the country asked for. Throws an IdentityError (one line, no
 * secret in it) when the proxy refuses, the lookup fails or times out, or the answer is wrong.
 */
export async function makeIdentity(opts: MakeIdentityOptions): Promise<ProxyIdentity> {
  const secrets = [opts.password, opts.geoipToken];
  try {
    const country = opts.country.toUpperCase();
    if (!opts.username || !opts.password) {
      throw new IdentityError('PROXY_USERNAME and PROXY_PASSWORD must be set for PROXY_COUNTRY');
    }
    const template = opts.usernameTemplate || DEFAULT_USERNAME_TEMPLATE;
    const problem = templateProblem(template);
    if (problem) throw new IdentityError(`PROXY_USERNAME_TEMPLATE ${problem}`);
    let proxy: URL;
    try {
      proxy = new URL(opts.proxyServer);
    } catch {
      throw new IdentityError('PROXY_SERVER is not a URL');
    }
    if (proxy.protocol !== 'http:') throw new IdentityError('PROXY_SERVER must be an http:// URL');
    let url: URL;
    try {
      url = geoipUrl(opts.geoipBaseUrl, opts.geoipToken);
    } catch {
      throw new IdentityError('GEOIP_BASE_URL is not a URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new IdentityError('GEOIP_BASE_URL must be an http(s) URL');
    }
    const session = opts.session ?? newSession();
    const username = sessionUsername(template, { username: opts.username, country, session });
    const body = await lookupThroughProxy({
      proxy,
      authorization: basic(username, opts.password),
      url,
      timeoutMs: opts.timeoutMs ?? GEOIP_TIMEOUT_MS,
      ca: opts.ca,
    });
    const geo = parseGeoipAnswer(body);
    if (geo.country !== country) {
      throw new IdentityError(`proxy exit ${geo.ip} is in ${geo.country}, not ${country}`);
    }
    const identity: ProxyIdentity = {
      proxy: { server: proxy.origin, username, password: opts.password },
      session,
      exit_ip: geo.ip,
      country,
      timezone: geo.timezone,
      locale: localeFor(country),
      latitude: geo.latitude,
      longitude: geo.longitude,
      created_at: new Date().toISOString(),
    };
    const checked = identitySchema.validate(identity, {
      errors: { wrap: { label: false } },
      messages: { 'string.pattern.base': '{{#label}} does not have the expected format' },
    });
    if (checked.error) {
      const detail = checked.error.details[0];
      throw new IdentityError(
        `identity is invalid: field ${detail?.path.join('.') ?? '?'}: ${detail?.message ?? ''}`,
      );
    }
    return checked.value;
  } catch (err) {
    const message = err instanceof IdentityError ? err.message : `identity failed: ${String(err)}`;
    throw new IdentityError(scrub(message, secrets));
  }
}
