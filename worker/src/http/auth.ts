import type { Request } from 'express';
import { safeEqual } from '../util';

/** An authentication failure: its body is `{detail}`, not the error envelope. */
export class AuthError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(detail);
  }
}

export class Authenticator {
  constructor(private readonly serviceKey: string | null) {}

  check(req: Request): void {
    if (!this.serviceKey) throw new AuthError(500, 'Server not properly configured');
    const header = req.header('authorization') ?? '';
    const m = /^Bearer\s+(.+)$/i.exec(header.trim());
    if (!m || !safeEqual(m[1] as string, this.serviceKey))
      throw new AuthError(401, 'Invalid API key');
  }
}
