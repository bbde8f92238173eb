import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR } from '../../../controller/store/db.ts';
import { migrate, readMigrations } from '../../../controller/store/migrate.ts';

/** A store as it was before migration 0013, filled like round 1 left it; then 0013 infers owners. */
describe('migration 0013: ownership inferred from what exists', () => {
  it('gives connections, facades and pipelines the owner their clients imply; mixed pipelines none', () => {
    const db = new Database(':memory:');
    const all = readMigrations(MIGRATIONS_DIR);
    migrate(db, all.filter((m) => m.version < 13));
    const at = '2026-01-01T00:00:00.000Z';
    const conn = db.prepare('INSERT INTO connections (connection_id, manifest_key, created_at, updated_at) VALUES (?, ?, ?, ?)');
    conn.run('D2026A00001', 'Client/ACME', at, at); // created by ACME's onboarding
    conn.run('D2026A00002', 'Connection/wh', at, at); // a Connection manifest GLOBEX onboarded onto
    conn.run('D2026A00003', 'Connection/idle', at, at); // nobody uses it
    const client = db.prepare(
      "INSERT INTO clients (client_id, client_name, connection_id, status, onboarded_date, last_modified_date) VALUES (?, ?, ?, 'ACTIVE', ?, ?)",
    );
    client.run('ACME', 'Acme', 'D2026A00001', at, at);
    client.run('GLOBEX', 'Globex', 'D2026A00002', at, at);
    db.prepare("INSERT INTO core_models (model_id, name, created_at, updated_at) VALUES ('SM2026A00001', 'core', ?, ?)").run(at, at);
    db.prepare("INSERT INTO semantic_models (model_id, client_id, core_model_id, name, created_at, updated_at) VALUES ('SM2026A00002', 'GLOBEX', 'SM2026A00001', 'm', ?, ?)").run(at, at);
    db.prepare("INSERT INTO vdms (vdm_id, model_id, client_id, connection_id, name, position, created_at, updated_at) VALUES ('V2026A00001', 'SM2026A00002', 'GLOBEX', 'D2026A00002', 'v', 0, ?, ?)").run(at, at);
    const facade = db.prepare('INSERT INTO facades (facade_id, name, client_id, connection_id, vdm_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
    facade.run('F2026A00001', 'onboarded', 'ACME', 'D2026A00001', null, at, at);
    facade.run('F2026A00002', 'standalone', null, 'D2026A00002', null, at, at);
    facade.run('F2026A00003', 'on an unowned connection, by its VDM', null, 'D2026A00003', 'V2026A00001', at, at);
    db.prepare("INSERT INTO experiments (experiment_id, facade_id, section, position, created_at, updated_at) VALUES ('E2026A00001', 'F2026A00001', 's', 0, ?, ?)").run(at, at);
    const pipeline = db.prepare('INSERT INTO pipelines (pipeline_id, name, source, destination, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)');
    const ends = (s: string, d: string) => [JSON.stringify({ connectionId: s }), JSON.stringify({ connectionId: d })];
    pipeline.run('DP-1', 'acme', ...ends('D2026A00001', 'D2026A00001'), at, at);
    pipeline.run('DP-2', 'mixed', ...ends('D2026A00001', 'D2026A00002'), at, at);
    pipeline.run('DP-3', 'step override', ...ends('D2026A00002', 'D2026A00002'), at, at);
    db.prepare("INSERT INTO pipeline_steps (step_id, pipeline_id, position, type, name, config) VALUES ('s', 'DP-3', 1, 'load', 'Load', ?)").run(JSON.stringify({ connectionId: 'D2026A00001' }));
    pipeline.run('DP-4', 'unknown connections', ...ends('D2026A09999', 'D2026A09999'), at, at);

    migrate(db, all);
    const owners = (sql: string) => Object.fromEntries((db.prepare(sql).all() as { id: string; owner: string | null }[]).map((r) => [r.id, r.owner]));
    expect(owners('SELECT connection_id AS id, owner_client_id AS owner FROM connections')).toEqual({ D2026A00001: 'ACME', D2026A00002: 'GLOBEX', D2026A00003: null });
    expect(owners('SELECT facade_id AS id, owner_client_id AS owner FROM facades')).toEqual({ F2026A00001: 'ACME', F2026A00002: 'GLOBEX', F2026A00003: 'GLOBEX' });
    db.prepare("INSERT INTO experiments (experiment_id, facade_id, section, position, created_at, updated_at) VALUES ('E2026A00009', 'F2026A00002', 's', 0, ?, ?)").run(at, at);
    expect(owners('SELECT experiment_id AS id, owner_client_id AS owner FROM experiments')).toEqual({ E2026A00001: 'ACME', E2026A00009: 'GLOBEX' });
    expect(owners('SELECT pipeline_id AS id, owner_client_id AS owner FROM pipelines')).toEqual({ 'DP-1': 'ACME', 'DP-2': null, 'DP-3': null, 'DP-4': null });
    expect(db.prepare("SELECT value FROM counters WHERE name = 'users.generation'").get()).toEqual({ value: 0 });
  });
});
