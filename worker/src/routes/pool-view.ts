import type { LeaseTable } from '../browser/leases';
import type { ManagedPage } from '../browser/managed-page';

/** A page as SPEC's detailed pool status shows it: cached values only, never a browser call. */
export function pageEntry(p: ManagedPage, leases: LeaseTable): Record<string, unknown> {
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
    url: p.url,
    title: p.title,
  };
}
