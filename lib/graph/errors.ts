// Why a graph cannot be answered: one stable code each and its HTTP status (README, "Graphs").
const GRAPH_ERRORS = {
  /** The path names no resource of its kind or no type. */
  GRAPH_NOT_FOUND: 404,
  /** `vhost=` names no virtual host being served. */
  VHOST_NOT_FOUND: 404,
  /** `vhost=` empty, or given to a global graph. */
  GRAPH_BAD_QUERY: 400,
  /** The render queue is full. */
  GRAPH_BUSY: 503,
} as const;

export type GraphErrorCode = keyof typeof GRAPH_ERRORS;

export class GraphError extends Error {
  constructor(readonly code: GraphErrorCode, message: string) {
    super(message);
    this.name = 'GraphError';
  }

  get httpStatus(): number {
    return GRAPH_ERRORS[this.code];
  }
}
