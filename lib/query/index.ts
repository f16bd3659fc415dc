// Read-only queries of `/get` and `svc get`: one parser and evaluator for both.
export { runQuery, type QuerySource } from './evaluate.js';
export { checkHttps } from './https.js';
export { parseQuery } from './selector.js';
export { getCommand, queryFile } from './cli.js';
