// The export filter of the statsd and logagent repositories (document 3: `exports.enable` false
// sends every event, true only those whose id matches a pattern of `exports.matchingList`).
// A line's event id is its event code in the watch log (`date time event vhost body`); a line
// of any other log has no id of its own, so the patterns are matched against the whole line.
export type LineFilter = (line: string) => boolean;

export function eventIdOf(logtype: string, line: string): string {
  if (logtype !== 'watch') return line;
  return line.split(' ', 3)[2] ?? '';
}

export function exportFilter(logtype: string, exp: { enable: boolean; matchingList: string[] | null }): LineFilter | undefined {
  if (!exp.enable) return undefined;
  const res = (exp.matchingList ?? []).map((p) => new RegExp(p));
  return (line) => {
    const id = eventIdOf(logtype, line);
    return res.some((r) => r.test(id));
  };
}
