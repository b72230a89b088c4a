// loadConfig: defaults, accepted values, and one error naming each bad variable.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { ConfigError, loadConfig } from '../../server/src/config.js';

const test = suite('config');

test('defaults (decisions.md 10)', () => {
  const c = loadConfig({});
  assert.is(c.port, 8080);
  assert.is(c.host, '0.0.0.0');
  assert.is(c.dataDir, resolve('./data'));
  assert.is(c.baseUrl, 'http://localhost:8080');
  assert.is(c.baseUrlFromEnv, false);
  assert.is(c.rateLimit, true);
  assert.is(c.trustProxy, 0);
  assert.is(c.rateLimitIpv6Prefix, 64, 'an IPv6 client is its /64');
  assert.is(c.smtpUrl, null);
  assert.is(c.mailFrom, 'relay@localhost');
  assert.is(c.webhookAllowPrivate, false);
  assert.is(c.workers, availableParallelism());
  assert.equal(c.dnsServers, []);
  assert.is(c.logLevel, 'info');
  assert.is(c.databaseUrl, null, 'SQLite in the data directory');
  assert.is(c.secretsDir, resolve('./data/secrets'));
});

test('PROVENANT_DATABASE_URL selects PostgreSQL; PROVENANT_SECRETS_DIR moves the keys', () => {
  const c = loadConfig({ PROVENANT_DATABASE_URL: 'postgres://provenant:pw@db.internal:5432/provenant', PROVENANT_SECRETS_DIR: '/run/secrets/provenant' });
  assert.is(c.databaseUrl, 'postgres://provenant:pw@db.internal:5432/provenant');
  assert.is(c.secretsDir, '/run/secrets/provenant');
  assert.is(loadConfig({ PROVENANT_DATABASE_URL: 'postgresql://h/db' }).databaseUrl, 'postgresql://h/db');
});

test('accepted values', () => {
  const c = loadConfig({
    PORT: '9000',
    HOST: '127.0.0.1',
    PROVENANT_DATA_DIR: '/tmp/pv',
    PROVENANT_BASE_URL: 'https://prov.example.com/',
    PROVENANT_RATE_LIMIT: 'off',
    PROVENANT_TRUST_PROXY: '2',
    PROVENANT_SMTP_URL: 'smtp://mail.example.com:2525',
    PROVENANT_MAIL_FROM: 'noreply@example.com',
    PROVENANT_WEBHOOK_ALLOW_PRIVATE: '1',
    PROVENANT_WORKERS: '3',
    PROVENANT_DNS_SERVERS: '127.0.0.1:5353, [::1]:53',
    PROVENANT_LOG_LEVEL: 'silent',
  });
  assert.is(c.port, 9000);
  assert.is(c.host, '127.0.0.1');
  assert.is(c.dataDir, '/tmp/pv');
  assert.is(c.baseUrl, 'https://prov.example.com');
  assert.is(c.baseUrlFromEnv, true);
  assert.is(c.rateLimit, false);
  assert.is(c.trustProxy, 2);
  assert.is(c.smtpUrl, 'smtp://mail.example.com:2525');
  assert.is(c.mailFrom, 'noreply@example.com');
  assert.is(c.webhookAllowPrivate, true);
  assert.is(c.workers, 3);
  assert.equal(c.dnsServers, ['127.0.0.1:5353', '[::1]:53']);
  assert.is(c.logLevel, 'silent');
  assert.is(loadConfig({ PORT: '1234' }).baseUrl, 'http://localhost:1234', 'the default base URL follows PORT');
  assert.is(loadConfig({ PROVENANT_RATE_LIMIT: 'ON' }).rateLimit, true);
  assert.is(loadConfig({ PROVENANT_RATE_LIMIT_IPV6_PREFIX: '48' }).rateLimitIpv6Prefix, 48);
  assert.is(loadConfig({ PROVENANT_RATE_LIMIT_IPV6_PREFIX: '128' }).rateLimitIpv6Prefix, 128);
});

const BAD: [string, string][] = [
  ['PORT', 'eighty'],
  ['PORT', '70000'],
  ['PORT', '-1'],
  ['HOST', 'bad host!'],
  ['PROVENANT_BASE_URL', 'not a url'],
  ['PROVENANT_BASE_URL', 'ftp://example.com'],
  ['PROVENANT_BASE_URL', 'https://example.com/?q=1'],
  ['PROVENANT_RATE_LIMIT', 'maybe'],
  ['PROVENANT_TRUST_PROXY', 'yes'],
  ['PROVENANT_TRUST_PROXY', '1.5'],
  ['PROVENANT_RATE_LIMIT_IPV6_PREFIX', '129'],
  ['PROVENANT_RATE_LIMIT_IPV6_PREFIX', '8'],
  ['PROVENANT_RATE_LIMIT_IPV6_PREFIX', '/64'],
  ['PROVENANT_SMTP_URL', 'http://mail.example.com'],
  ['PROVENANT_MAIL_FROM', 'not an address'],
  ['PROVENANT_WEBHOOK_ALLOW_PRIVATE', 'yes please'],
  ['PROVENANT_WORKERS', '0'],
  ['PROVENANT_WORKERS', 'many'],
  ['PROVENANT_DNS_SERVERS', '127.0.0.1'],
  ['PROVENANT_DNS_SERVERS', '127.0.0.1:99999'],
  ['PROVENANT_LOG_LEVEL', 'verbose'],
  ['PROVENANT_DATABASE_URL', 'mysql://db/provenant'],
  ['PROVENANT_DATABASE_URL', 'not a url'],
];

for (const [name, value] of BAD) {
  test(`${name}=${JSON.stringify(value)} is refused with a one-line error naming it`, () => {
    try {
      loadConfig({ [name]: value });
      assert.unreachable('should throw');
    } catch (err) {
      assert.instance(err, ConfigError);
      const e = err as ConfigError;
      assert.is(e.variable, name);
      assert.ok(e.message.startsWith(`${name}: `), e.message);
      assert.not.ok(e.message.includes('\n'), 'one line');
    }
  });
}

test('empty values mean unset', () => {
  assert.is(loadConfig({ PORT: '', PROVENANT_SMTP_URL: '  ' }).port, 8080);
});

test('the change feed window (issue 25 item 10): defaults, values, bounds', () => {
  const d = loadConfig({});
  assert.equal([d.feedMaxChanges, d.feedMaxAgeMs], [1_000_000, 24 * 3_600_000]);
  const c = loadConfig({ PROVENANT_FEED_MAX_CHANGES: '5000', PROVENANT_FEED_MAX_AGE_HOURS: '2' });
  assert.equal([c.feedMaxChanges, c.feedMaxAgeMs], [5_000, 2 * 3_600_000]);
  for (const [name, value] of [['PROVENANT_FEED_MAX_CHANGES', '99'], ['PROVENANT_FEED_MAX_CHANGES', '1e6'], ['PROVENANT_FEED_MAX_AGE_HOURS', '0'], ['PROVENANT_FEED_MAX_AGE_HOURS', '87601']]) {
    assert.throws(() => loadConfig({ [name]: value }), (err: Error) => err instanceof ConfigError && err.message.startsWith(`${name}:`), `${name}=${value}`);
  }
});

test.run();
