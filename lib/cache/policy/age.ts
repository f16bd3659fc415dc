// The Age header lives with the age computation in freshness.ts; this module name is kept for discoverability.
export { ageHeaderValue, currentAge } from './freshness.js';
