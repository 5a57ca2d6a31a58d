import express from 'express';
import type { Router } from 'express';
import type { PersonaInfo } from '@persona-browser/contracts';
import type { Logger } from '@persona-browser/service-kit';
import type { AuthGuard } from '@persona-browser/service-kit';
import { AuthRefusal, KEY_ONLY } from '@persona-browser/service-kit';
import type { RefusalCounter } from '../metrics/prometheus';
import { ArgumentError, fleetCatalog, McpHost, RestTarget } from '@persona-browser/mcp';
import type { Persona } from '../persona/persona';

export interface FleetMcpDeps {
  fleet: { list(): PersonaInfo[]; get(name: string): Persona };
  serviceKey: string | null;
  /** The waker's credential check: its MCP takes the service key alone, throttled. */
  guard: AuthGuard;
  refusals?: RefusalCounter | null;
  logger: Logger;
  version: string;
}

/**
 * The fleet's MCP server at the waker's `/mcp`: one agent, every persona. The tools are a
 * persona's with a `persona` argument, each call made to that persona's front door (so a
 * sleeping persona wakes, and its leases and rules hold), plus `list_personas`.
 */
export class FleetMcp {
  private host: McpHost | null = null;

  constructor(private readonly deps: FleetMcpDeps) {}

  /** The waker listens on `port`: the fleet's own tools call it there. */
  listening(port: number): void {
    const { fleet, serviceKey } = this.deps;
    const targets = new Map<string, RestTarget>();
    this.host = new McpHost({
      name: 'persona-browser fleet',
      version: this.deps.version,
      logger: this.deps.logger,
      target: new RestTarget(`http://127.0.0.1:${port}`, serviceKey),
      tools: fleetCatalog({
        target: (name, origin) => {
          let persona: Persona;
          try {
            persona = fleet.get(name);
          } catch {
            throw new ArgumentError(`Unknown persona '${name}': list_personas names them`);
          }
          const url = `http://127.0.0.1:${persona.spec.port}`;
          let t = targets.get(url);
          if (!t) targets.set(url, (t = new RestTarget(url, serviceKey)));
          // The agent reached the waker at origin.host: a person reaches the persona on the
          // same host, at the persona's own port (ask_person's live_url).
          const host = origin.host?.replace(/:\d+$/, '');
          return host
            ? t.forwarding({ host: `${host}:${persona.spec.port}`, proto: origin.proto })
            : t;
        },
        sample: () => {
          const all = fleet.list();
          return (all.find((p) => p.state === 'running') ?? all[0])?.name ?? null;
        },
      }),
    });
  }

  router(): Router {
    const r = express.Router();
    r.all('/mcp', express.json({ limit: '1mb' }), (req, res, next) => {
      try {
        this.deps.guard.check(
          { authorization: req.headers.authorization, address: req.socket.remoteAddress },
          KEY_ONLY,
          null,
        );
      } catch (err) {
        if (err instanceof AuthRefusal) this.deps.refusals?.refused('mcp', err.reason);
        throw err;
      }
      if (!this.host) {
        res.status(503).json({ success: false, error: 'The waker is starting', page_id: null });
        return;
      }
      this.host.handle(req, res, req.body).catch(next);
    });
    return r;
  }

  close(): Promise<void> {
    return this.host?.close() ?? Promise.resolve();
  }
}
