import t from 'tap';
import { isSize, parseSize } from '../../lib/setting/size.js';

t.test('sizes with a unit parse to bytes in binary units', async (t) => {
  t.equal(parseSize('0'), 0);
  t.equal(parseSize('100'), 100);
  t.equal(parseSize('100b'), 100);
  t.equal(parseSize('512kb'), 512 * 1024);
  t.equal(parseSize('100mb'), 100 * 1024 * 1024);
  t.equal(parseSize('1gb'), 1024 ** 3);
  t.equal(parseSize('2tb'), 2 * 1024 ** 4);
  t.equal(parseSize('1.5gb'), 1.5 * 1024 ** 3);
  t.equal(parseSize('1GB'), 1024 ** 3, 'units are case-insensitive');
  t.equal(parseSize('10 mb'), 10 * 1024 * 1024, 'a space before the unit is allowed');
  t.equal(parseSize('4k'), 4096, 'the short units k, m, g, t are allowed');
  t.equal(parseSize('1.0001kb'), 1024, 'rounded down to a byte');
});

t.test('malformed sizes are refused with a RangeError', async (t) => {
  for (const bad of ['', 'mb', '-1mb', '1xb', '1 gigabyte', '1e3', '0x10', '1.kb', 'NaN']) {
    t.throws(() => parseSize(bad), RangeError, bad);
    t.equal(isSize(bad), false, bad);
  }
});
