// What the live view uses of noVNC's RFB client (served by the worker at
// /vnc/novnc/core/rfb.js from the @novnc/novnc package, which ships no types).

export interface RfbOptions {
  shared?: boolean;
  credentials?: { username?: string; password?: string; target?: string };
}

export interface RfbEvents {
  connect: CustomEvent<Record<string, never>>;
  disconnect: CustomEvent<{ clean: boolean }>;
  desktopname: CustomEvent<{ name: string }>;
  securityfailure: CustomEvent<{ status: number; reason?: string }>;
}

export default class RFB extends EventTarget {
  constructor(target: HTMLElement, url: string, options?: RfbOptions);
  scaleViewport: boolean;
  resizeSession: boolean;
  clipViewport: boolean;
  focusOnClick: boolean;
  background: string;
  viewOnly: boolean;
  focus(): void;
  disconnect(): void;
  addEventListener<K extends keyof RfbEvents>(type: K, listener: (ev: RfbEvents[K]) => void): void;
}
