import type { RouteDef } from '../http/route';
import type { MediaStore } from '../media/store';

/** STUB — GET /api/v1/media/{token} (issue 4). */
export function mediaRoutes(_media: MediaStore): RouteDef[] {
  return [];
}
