import type { ManagedPage } from '../browser/managed-page';

/** STUB — to be implemented (issue 4, network capture). One capture per pooled page. */
export class CaptureRegistry {
  attach(_page: ManagedPage): void {}

  detach(_pageId: string): void {}
}
