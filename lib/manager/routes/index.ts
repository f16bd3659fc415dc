// Every route of the management API, one file per group of document 1. Later groups
// (`/setting`, `/get`, `/graph`, `/metrics`, the rest of `/command`) add their file here; the
// dispatcher refuses to start if a route lies outside every permission gate of access.ts.
import type { Route } from '../router.js';
import { commandRoutes } from './command.js';
import { monitoringRoutes } from './monitoring.js';

export function allRoutes(): Route[] {
  return [...monitoringRoutes, ...commandRoutes];
}
