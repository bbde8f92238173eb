import { describe, expect, it } from 'vitest';
import { StoreConnectionResolver } from '../../../../controller/runs/engine/connections.ts';
import { SecretStore } from '../../../../controller/secrets/store.ts';
import { openStore } from '../../../../controller/store/db.ts';
import { secretTarget } from '../../../../controller/secrets/target.ts';

function store() {
  const db = openStore(':memory:');
  const secrets = new SecretStore({ db, secretKey: 'k'.repeat(64) });
  const add = (id: string, cols: Record<string, string | null>): void => {
    db.prepare(
      `INSERT INTO connections (connection_id, name, vendor, account_url, database_name, schema_name, username, password_env, secret_ref, created_at, updated_at)
       VALUES (@id, @id, @vendor, @account_url, @database_name, @schema_name, @username, @password_env, @secret_ref, 'x', 'x')`,
    ).run({ id, vendor: 'POSTGRESQL', account_url: null, database_name: null, schema_name: null, username: null, password_env: null, secret_ref: null, ...cols });
  };
  return { db, secrets, add };
}

describe('StoreConnectionResolver', () => {
  it('reads host and port from the stored account URL and the password from passwordEnv', () => {
    const { db, secrets, add } = store();
    add('PG1', { account_url: 'postgresql://db.internal:6543', database_name: 'sales', schema_name: 'rep', username: 'bi', password_env: 'BI_CONN_PG1_PW' });
    const r = new StoreConnectionResolver({ db, secrets, env: { BI_CONN_PG1_PW: 's3cret' } });
    expect(r.resolve('PG1')).toEqual({
      connectionId: 'PG1',
      vendor: 'POSTGRESQL',
      host: 'db.internal',
      port: 6543,
      accountUrl: 'postgresql://db.internal:6543',
      database: 'sales',
      schema: 'rep',
      username: 'bi',
      password: 's3cret',
    });
    expect(() => new StoreConnectionResolver({ db, secrets, env: {} }).resolve('PG1')).toThrow('Connection PG1: environment variable BI_CONN_PG1_PW (passwordEnv) is not set');
  });

  it('reads no variable but a credential one (BI_CONN_*): a row stored before the rule cannot read the controller’s settings', () => {
    const { db, secrets, add } = store();
    add('PG5', { account_url: 'postgresql://127.0.0.1:5432', username: 'bi', password_env: 'BI_SECRET_KEY' });
    add('PG6', { account_url: 'postgresql://127.0.0.1:5432', username: 'bi', password_env: 'bi_conn_lower' });
    const r = new StoreConnectionResolver({ db, secrets, env: { BI_SECRET_KEY: 'the-controller-key', bi_conn_lower: 'x' } });
    expect(() => r.resolve('PG5')).toThrow('Connection PG5: passwordEnv "BI_SECRET_KEY" must name a credential variable matching BI_CONN_[A-Z0-9_]+');
    expect(() => r.resolve('PG6')).toThrow('Connection PG6: passwordEnv "bi_conn_lower" must name a credential variable matching BI_CONN_[A-Z0-9_]+');
  });

  it('decrypts a secretRef; no credential at all means trust auth (no password)', () => {
    const { db, secrets, add } = store();
    const { secretRef } = secrets.put('from-the-vault', { target: secretTarget({ vendor: 'POSTGRESQL', host: '127.0.0.1', port: 5432 }) });
    add('PG2', { account_url: 'postgresql://127.0.0.1:5432', secret_ref: secretRef });
    add('PG3', { account_url: 'postgresql://127.0.0.1' });
    const r = new StoreConnectionResolver({ db, secrets });
    expect(r.resolve('PG2').password).toBe('from-the-vault');
    expect(r.resolve('PG3')).toMatchObject({ host: '127.0.0.1', port: 5432 });
    expect(r.resolve('PG3').password).toBeUndefined();
  });

  it('never sends a stored secret to another target than the one it was stored for', () => {
    const { db, secrets, add } = store();
    const { secretRef } = secrets.put('from-the-vault', { target: secretTarget({ vendor: 'POSTGRESQL', host: '127.0.0.1', port: 5432 }) });
    // A connection whose row was pointed at an attacker's host with the same secret.
    add('PG4', { account_url: 'postgresql://attacker.example:5432', secret_ref: secretRef });
    const r = new StoreConnectionResolver({ db, secrets });
    expect(() => r.resolve('PG4')).toThrow(/^Connection PG4: secretRef secret:\S+ was stored for another target \(host differs\)/);
  });

  it('an unknown connection, or one the tenant may not use, answers the same: not found', () => {
    const { db, secrets, add } = store();
    add('PG1', { account_url: 'postgresql://h:1' });
    const r = new StoreConnectionResolver({ db, secrets, mayUse: (id) => id !== 'PG1' });
    expect(() => r.resolve('PG1')).toThrow('Connection PG1 not found');
    expect(() => r.resolve('NOPE')).toThrow('Connection NOPE not found');
  });
});
