// The setting lifecycle: deployment, upload, history, restore, virtual-host edits, config logs.
export { SettingLifecycle, type RuntimeHooks } from './lifecycle.js';
export type { Applied } from './sources.js';
export { LoadFailure } from './candidate.js';
export { VhostError, createVhost, deleteVhost, editVhost, getVhost } from './vhosts.js';
export { restoreMissingSetting } from './state-pointer.js';
