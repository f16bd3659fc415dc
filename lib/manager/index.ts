// The management API of the primary (document 1).
export { ManagementApi } from './server.js';
export type { OriginState, OriginStatus, RtBridge } from './types.js';
export { AccessControl, permissionFor } from '../access/access.js';
export type { Route } from './router.js';
