// OCSP responses that must never be stapled: a responder's error status, a truncated answer.
// (A real responder's successful answer is covered by test/e2e/tls/ocsp.test.ts.)
import t from 'tap';
import { parseResponse } from '../../lib/worker/tls/ocsp.js';

const id = { der: Buffer.alloc(0), serial: Buffer.from([1]) };

t.test('a response with an error status (tryLater) is refused', async (t) => {
  t.throws(() => parseResponse(Buffer.from('30030a0103', 'hex'), id), /responder status 3 \(not successful\)/);
});

t.test('a truncated response is refused', async (t) => {
  t.throws(() => parseResponse(Buffer.from('30820100', 'hex'), id), /truncated DER/);
});
