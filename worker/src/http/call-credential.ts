import type { Credential } from '@persona-browser/service-kit';
import { credentialName, isRecord } from '@persona-browser/service-kit';

/** Where the mount leaves the credential that opened a route (`res.locals`). */
const CREDENTIAL_KEY = 'credential';

const isCredential = (v: unknown): v is Credential =>
  isRecord(v) && (v.kind === 'key' || (v.kind === 'token' && isRecord(v.claims)));

/** Called by the mount once the route's check passed (null: a public route, none needed). */
export function keepCredential(locals: Record<string, unknown>, c: Credential | null): void {
  locals[CREDENTIAL_KEY] = c;
}

/** The credential that opened this call, or null (a public route, or refused before). */
export function credentialOf(locals: Record<string, unknown>): Credential | null {
  const c = locals[CREDENTIAL_KEY];
  return isCredential(c) ? c : null;
}

/** How a call's credential shows in log lines: `key`, a token id, or empty. Never a secret. */
export const callerOf = (locals: Record<string, unknown>): string =>
  credentialName(credentialOf(locals));
