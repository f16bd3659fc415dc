// The setting lifecycle: deployment, upload, history, restore, virtual-host edits, config logs.
export { SettingLifecycle, type Applied, type PackageAnswer, type RuntimeHooks, type SettingLifecycleOptions } from './lifecycle.js';
export { LoadFailure, type LoadCode } from './candidate.js';
export { VhostError, createVhost, deleteVhost, editVhost, getVhost } from './vhosts.js';
export { ConfigEvents, WATCH, type WatchEvent } from './config-events.js';
export type { HistoryEntry } from './history.js';
export { restoreMissingSetting } from './state-pointer.js';
