// The five graph types of document 1 (size, step, span) and the round-robin archives behind
// them. Each archive keeps `span / step` consolidated rows; dash and day share the 5-minute one.
// A coarser archive's Peak is the largest Main value of the archive one step finer, so the
// Peak line exists from `week` up.

/** One consolidation level of the history: its step and how many steps it keeps. */
export interface Archive {
  index: number;
  /** Seconds. */
  step: number;
  rows: number;
}

const DAY = 86_400;

export const ARCHIVES: readonly Archive[] = [
  { index: 0, step: 300, rows: (2 * DAY) / 300 },
  { index: 1, step: 1800, rows: (14 * DAY) / 1800 },
  { index: 2, step: 7200, rows: (49 * DAY) / 7200 },
  // 18 months taken as 548 days.
  { index: 3, step: DAY, rows: 548 },
];

export type GraphTypeName = 'dash' | 'day' | 'week' | 'month' | 'year';

export interface GraphType {
  name: GraphTypeName;
  width: number;
  height: number;
  archive: Archive;
  /** Seconds shown. */
  span: number;
  /** Whether the pink Peak line is drawn. */
  peak: boolean;
  /** How the span is said in the title. */
  spanText: string;
}

export const GRAPH_TYPES: Readonly<Record<GraphTypeName, GraphType>> = {
  dash: { name: 'dash', width: 205, height: 175, archive: ARCHIVES[0]!, span: 12 * 3600, peak: false, spanText: '12 hours' },
  day: { name: 'day', width: 580, height: 203, archive: ARCHIVES[0]!, span: 2 * DAY, peak: false, spanText: '2 days' },
  week: { name: 'week', width: 580, height: 203, archive: ARCHIVES[1]!, span: 14 * DAY, peak: true, spanText: '2 weeks' },
  month: { name: 'month', width: 580, height: 203, archive: ARCHIVES[2]!, span: 49 * DAY, peak: true, spanText: '7 weeks' },
  year: { name: 'year', width: 580, height: 203, archive: ARCHIVES[3]!, span: 548 * DAY, peak: true, spanText: '18 months' },
};

export function isGraphType(s: string): s is GraphTypeName {
  return Object.hasOwn(GRAPH_TYPES, s);
}
