// What of a URL the hash balance hashes: the host plus the URL cut at the first match of an
// urlIgnoreList entry. `#FUNCTION` stands for the function-chain keywords (the pagedesk
// keyword segment `/<keyword>/`), so `/a.html/pagedesk/edit/default` hashes like `/a.html`.
// The computation sits behind one function type so a Lua script (balance.luaPath) can replace it.

export type HashKeyFunction = (host: string, url: string) => string;

export function urlIgnoreHashKey(ignoreList: readonly string[], functionKeywords: readonly string[]): HashKeyFunction {
  const cuts: string[] = [];
  for (const entry of ignoreList) {
    if (entry === '#FUNCTION') for (const k of functionKeywords) cuts.push(`/${k}/`);
    else if (entry !== '') cuts.push(entry);
  }
  if (cuts.length === 0) return (host, url) => host + url;
  return (host, url) => {
    let end = url.length;
    for (const cut of cuts) {
      const at = url.indexOf(cut);
      if (at >= 0 && at < end) end = at;
    }
    return host + (end === url.length ? url : url.slice(0, end));
  };
}
