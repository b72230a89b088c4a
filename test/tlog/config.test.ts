// PROVENANT_LOG_WITNESSES (issue 27): `<vkey> <url>[,<vkey> <url> ...]`, cosignature/v1
// keys and http(s) URLs without credentials, query or fragment; anything else refused at
// start naming the variable. The log's origin: PROVENANT_LOG_ORIGIN, else from PROVENANT_BASE_URL.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SIG_COSIGNATURE_V1, SIG_ED25519, verifierOf } from 'provenant';
import { ConfigError, loadConfig } from '../../server/src/config.js';
import { logOrigin } from '../../server/src/tlog/log-key.js';

const w1 = verifierOf('w1.example', SIG_COSIGNATURE_V1, new Uint8Array(32).fill(1)).vkey;
const w2 = verifierOf('w2.example', SIG_COSIGNATURE_V1, new Uint8Array(32).fill(2)).vkey;
const ed = verifierOf('log.example', SIG_ED25519, new Uint8Array(32).fill(3)).vkey;

test('witnesses parsed, trailing slashes dropped; none by default', () => {
  assert.equal(loadConfig({}).logWitnesses, []);
  assert.equal(loadConfig({ PROVENANT_LOG_WITNESSES: `${w1} https://w1.example/sub/, ${w2}  http://127.0.0.1:8090` }).logWitnesses, [
    { vkey: w1, url: 'https://w1.example/sub' },
    { vkey: w2, url: 'http://127.0.0.1:8090' },
  ]);
});

test('bad witnesses are refused naming the variable', () => {
  for (const value of [w1, `${w1} ftp://x.example`, `${ed} https://x.example`, `nonsense https://x.example`, `${w1} https://u:p@x.example`, `${w1} https://x.example/?q=1`, `${w1} https://x.example/#f`, `${w1} https://a.example https://b.example`]) {
    try {
      loadConfig({ PROVENANT_LOG_WITNESSES: value });
      assert.unreachable(value);
    } catch (err) {
      assert.instance(err, ConfigError, value);
      assert.match((err as Error).message, 'PROVENANT_LOG_WITNESSES');
    }
  }
});

test('the origin: the base URL\'s host (and port) + /log; localhost/log without one', () => {
  assert.is(logOrigin(loadConfig({ PROVENANT_BASE_URL: 'https://provenant.example' })), 'provenant.example/log');
  assert.is(logOrigin(loadConfig({ PROVENANT_BASE_URL: 'http://provenant.example:8443/' })), 'provenant.example:8443/log');
  assert.is(logOrigin(loadConfig({ PORT: '9999' })), 'localhost/log');
});

test('PROVENANT_LOG_ORIGIN sets the origin over the base URL; a bad one is refused naming the variable', () => {
  assert.is(logOrigin(loadConfig({ PROVENANT_BASE_URL: 'https://new.example', PROVENANT_LOG_ORIGIN: 'old.example/log' })), 'old.example/log');
  assert.is(logOrigin(loadConfig({ PROVENANT_LOG_ORIGIN: 'example.com/tlog/v1' })), 'example.com/tlog/v1');
  for (const value of ['a b/log', 'a+b/log', 'caf\u00e9.example/log', 'x'.repeat(256), 'tab\there']) {
    try {
      loadConfig({ PROVENANT_LOG_ORIGIN: value });
      assert.unreachable(value);
    } catch (err) {
      assert.instance(err, ConfigError, value);
      assert.match((err as Error).message, 'PROVENANT_LOG_ORIGIN');
    }
  }
});

test.run();
