// The upload path variables of document 3.
import t from 'tap';
import { expandPath, unknownVariables } from '../../lib/log/repository/path-template.js';

const ctx = { group: 'edge-kr', domain: 'www.example.com', hostname: 'node7', ip: '10.0.0.7', logtype: 'access', at: Date.UTC(2026, 1, 3, 4, 5, 6) };

t.test('every path variable of document 3 is replaced, in UTC', async (t) => {
  t.equal(expandPath('{group}/{domain}/{hostname}/{ip}/{logtype}/{timestamp}.log', ctx), 'edge-kr/www.example.com/node7/10.0.0.7/access/20260203040506.log');
  t.equal(expandPath('year={timestamp.year}/month={timestamp.month}/day={timestamp.day}/hour={timestamp.hour}/{timestamp.minute}{timestamp.second}', ctx),
    'year=2026/month=02/day=03/hour=04/0506');
  t.equal(expandPath('{timestamp.date}/{timestamp.time}-{logtype}', { ...ctx, logtype: 'origin' }), '20260203/040506-origin');
});

t.test('a leading slash does not make an empty first segment of the key', async (t) => {
  t.equal(expandPath('/logs/{domain}', ctx), 'logs/www.example.com');
});

t.test('unknown variables are reported, known ones are not', async (t) => {
  t.same(unknownVariables('{domain}/{Timestamp}/{timestamp.week}/{ip}'), ['Timestamp', 'timestamp.week']);
  t.same(unknownVariables('{group}/{timestamp.second}'), []);
});

