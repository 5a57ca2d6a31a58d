export { createPersonaClient } from './client';
export type { PersonaClient, PersonaClientOptions, PersonaHelpers } from './client';
export { BUSY, untilFree } from './busy';
export type { BusyWaitOptions } from './busy';
export { Lease } from './lease';
export type { LeaseOptions } from './lease';
export { settle } from './result';
export type { Answer, AuthErrorBody, ErrorBody, Failure, Result, Success } from './result';
export type { components, operations, paths } from './generated/api';
