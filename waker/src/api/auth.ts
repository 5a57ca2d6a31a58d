import crypto from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

function safeEqual(a: string, b: string): boolean {
  const ha = crypto.createHash('sha256').update(a).digest();
  const hb = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(ha, hb);
}

/** `Authorization: Bearer <SERVICE_KEY>`, answered as the worker does (SPEC: Authentication). */
export function requireKey(serviceKey: string | null) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!serviceKey) {
      res.status(500).json({ detail: 'Server not properly configured' });
      return;
    }
    const m = /^Bearer\s+(.+)$/i.exec((req.header('authorization') ?? '').trim());
    if (!m || !safeEqual(m[1] as string, serviceKey)) {
      res.status(401).json({ detail: 'Invalid API key' });
      return;
    }
    next();
  };
}
