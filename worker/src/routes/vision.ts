import type { Navigator } from '../browser/navigator';
import type { RouteDef } from '../http/route';
import type { VisionClient } from '../vision/client';

/** STUB — POST /api/v1/ops/{page_id}/search-object (issue 4). */
export function visionRoutes(_navigator: Navigator, _vision: VisionClient): RouteDef[] {
  return [];
}
