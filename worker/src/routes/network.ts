import type { Navigator } from '../browser/navigator';
import type { CaptureRegistry } from '../capture/registry';
import type { RouteDef } from '../http/route';

/** STUB — GET /api/v1/ops/{page_id}/network (issue 4). */
export function networkRoutes(_navigator: Navigator, _captures: CaptureRegistry): RouteDef[] {
  return [];
}
