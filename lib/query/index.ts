// Read-only queries of `/get` and `svc get`: one parser and evaluator for both.
export {
  functionNames, hostingSummary, runQuery, type DiscoverEntry, type HostingSummary, type QueryOutcome, type QuerySource,
} from './evaluate.js';
export { checkHttps, type HttpsEntry, type HttpsReport } from './https.js';
export { describe, normaliseQuery, parseQuery, QuerySyntaxError, UnknownQueryError, type Query, type Step } from './selector.js';
export { fileSource, getCommand, GET_USAGE, queryApi, queryFile, type GetOptions } from './cli.js';
