// The management API of the primary (document 1).
export { ManagementApi } from './server.js';
export { RtBridgeError } from './types.js';
export type { ManagementApiOptions, OriginState, OriginStatus, RtBridge } from './types.js';
export { AccessControl, GATES, permissionFor, type Permission } from '../access/access.js';
export { HTTP, STATUS, type Envelope, type StatusGroup } from './envelope.js';
export type { Route } from './router.js';
