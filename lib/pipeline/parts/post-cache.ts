// Cached POST (functions.network.cache.cachingKey.postMethod): an API answered by POST is cached
// like a GET under a key made of the URL's key and, with bodySensitive, the SHA-256 of the body;
// clients with the same key share one origin request. The body is read whole first, up to
// bodyContentLengthMax: a larger one streams on to the origin, uncached and not coalesced.
import type { CacheKey } from '../../cache/store.js';
import { postKeyUrl } from '../../cache/key.js';
import type { NetworkRules } from '../../network/rules.js';
import { sendToOrigin } from './proxy.js';
import type { Transaction } from './transaction.js';
import { Upload } from './upload.js';
import { TCP_NONE } from '../../cache/policy/results.js';

export function servePost(tx: Transaction, net: NetworkRules, post: { max: number; bodySensitive: boolean }, lookup: (tx: Transaction, key: CacheKey) => void): void {
  const upload = new Upload(tx, { ...tx.host.upload, bufferUpTo: post.max });
  // bufferUpTo 0 means "stream at once": then only an empty body can be cached.
  const taken = post.max === 0 && tx.req.readableEnded ? Promise.resolve(Buffer.alloc(0)) : upload.take();
  taken.then((body) => {
    if (body === undefined) return;
    if (!Buffer.isBuffer(body)) {
      tx.cacheResult = TCP_NONE;
      sendToOrigin(tx, body, upload);
      return;
    }
    upload.stop();
    tx.postBody = body;
    const keyUrl = net.key === undefined ? tx.url : net.key.url(tx.url);
    lookup(tx, { vhost: tx.host.name, url: postKeyUrl(keyUrl, post.bodySensitive ? body : undefined) });
  }, () => undefined);
}
