// env.log.error.filter: which error lines are kept. A line is kept when its level is at or above
// the configured severity (a lower number is more severe), when it matches one of `include` (an
// empty list keeps every line) and then none of `exclude`. The patterns match the whole line as
// written, whatever the field; they are compiled once, when the setting is loaded (validation has
// already refused a pattern that does not compile, at its JSON path).
import type { Setting } from '../../setting/types.js';
import { levelOf, type LevelName } from './error-codes.js';

export class ErrorFilter {
  private readonly maxLevel: number;
  private readonly include: RegExp[];
  private readonly exclude: RegExp[];

  constructor(filter: Setting['env']['log']['error']['filter']) {
    this.maxLevel = levelOf(filter.minLevel as LevelName);
    this.include = filter.patterns.include.map((p) => new RegExp(p));
    this.exclude = filter.patterns.exclude.map((p) => new RegExp(p));
  }

  /** True when a line of this level is written at all (checked before formatting it). */
  wants(level: number): boolean {
    return level <= this.maxLevel;
  }

  keeps(line: string): boolean {
    if (this.include.length > 0 && !this.include.some((r) => r.test(line))) return false;
    return !this.exclude.some((r) => r.test(line));
  }
}
