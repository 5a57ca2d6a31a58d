import http from 'node:http';
import https from 'node:https';
import { SUPERVISOR_PATHS } from '@persona-browser/contracts';

/** The supervisor's answer as it gave it: its status code and its JSON body. */
export interface SupervisorReply {
  status: number;
  body: unknown;
}

/** Asks the supervisor that started this waker for its status. */
export interface SupervisorClient {
  status(): Promise<SupervisorReply>;
}

/** This waker was started without SUPERVISOR_URL: there is nobody to ask (404). */
export class NoSupervisor extends Error {
  constructor() {
    super('no supervisor: this waker was not started by one');
  }
}

/** The supervisor could not be asked, or its answer was not JSON (502). */
export class SupervisorUnreachable extends Error {
  constructor(why: string) {
    super(`supervisor unreachable: ${why}`);
  }
}

const MAX_BODY_BYTES = 1024 * 1024;

/**
 * `GET <baseUrl>/api/supervisor` with the service key, through `http.request` and a deadline
 * for the whole exchange: fetch can hang on a connection that is accepted and never answered,
 * and the panel polls this every few seconds.
 */
export function supervisorClient(
  baseUrl: string,
  serviceKey: string | null,
  timeoutMs = 3_000,
): SupervisorClient {
  const url = new URL(`${baseUrl.replace(/\/+$/, '')}${SUPERVISOR_PATHS.status}`);
  const headers: Record<string, string> = { accept: 'application/json' };
  if (serviceKey) headers.authorization = `Bearer ${serviceKey}`;
  const send = url.protocol === 'https:' ? https.request : http.request;
  return {
    status: () =>
      new Promise<SupervisorReply>((resolve, reject) => {
        const fail = (why: string): void => {
          clearTimeout(timer);
          reject(new SupervisorUnreachable(why));
          req.destroy();
        };
        const req = send(url, { method: 'GET', headers, agent: false }, (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > MAX_BODY_BYTES) fail('its answer is larger than 1 MB');
            else chunks.push(c);
          });
          res.on('end', () => {
            clearTimeout(timer);
            const status = res.statusCode ?? 0;
            // Relayed as is, a 401 would tell the caller its own key is wrong.
            if (status === 401 || status === 403) {
              return fail(`it refused the waker's SERVICE_KEY (HTTP ${status})`);
            }
            try {
              const body: unknown = JSON.parse(Buffer.concat(chunks).toString());
              resolve({ status, body });
            } catch {
              fail(`it answered HTTP ${status} without a JSON body`);
            }
          });
          res.on('error', (err) => fail(err.message));
        });
        const timer = setTimeout(() => fail(`no answer within ${timeoutMs / 1000} s`), timeoutMs);
        req.on('error', (err) => fail(err.message));
        req.end();
      }),
  };
}
