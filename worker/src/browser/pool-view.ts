import type { PageEntry, PoolStatus } from '@persona-browser/contracts';
import type { LeaseTable } from './leases';
import type { ManagedPage } from './managed-page';
import type { Navigator } from './navigator';

/**
 * A page as the detailed pool status shows it: cached values only, never a browser call, and
 * no secret in its URL or title (the route needs no key).
 */
export function pageEntry(
  p: ManagedPage,
  leases: LeaseTable,
  redact: (text: string) => string,
): PageEntry {
  const state = p.state;
  return {
    page_id: p.id,
    state,
    current_operation: p.currentOperation,
    operation_duration: p.operationDuration,
    responsive: p.responsive,
    loading: p.loading,
    stuck: state === 'stuck',
    error_count: p.errorCount,
    leased: leases.isLeased(p.id),
    lease_expires_in: leases.expiresIn(p.id),
    last_activity: p.lastActivity,
    url: redact(p.url),
    title: redact(p.title),
  };
}

/** The pool status; 500 (NotInitialized) while the navigator is down. */
export function poolStatus(navigator: Navigator): PoolStatus {
  const pool = navigator.requirePool();
  return {
    total_pages: pool.size,
    max_pages: navigator.status().max_pages,
    status_by_state: pool.countByState(),
    pages: pool.list().map((p) => pageEntry(p, navigator.leases, (t) => navigator.redact(t))),
  };
}
