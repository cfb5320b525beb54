//! Versioned, additive schema migrations (docs/contract.md §8 "States": schema changes are
//! additive so a running older binary keeps working beside a newer one).
//!
//! The `meta` table holds `schema_version` (the newest migration applied) and
//! `compatible_from` (the oldest schema a binary must know to use this store). A newer binary
//! applies its missing migrations; an older binary opens the store as long as it knows
//! `compatible_from`, and is refused with [`crate::Error::TooNew`] otherwise. A migration that
//! only adds tables, columns or indexes leaves `compatible_from` alone.

use crate::error::Error;

/// The newest schema version this binary knows.
pub const SCHEMA_VERSION: i64 = 9;

/// One migration: its SQL for each backend and the `compatible_from` it sets.
pub(crate) struct Migration {
    pub(crate) version: i64,
    pub(crate) compatible_from: i64,
    pub(crate) sqlite: &'static str,
    pub(crate) postgres: &'static str,
}

/// Every migration, oldest first. There is no 4: two branches took it in parallel and the later
/// merge became 6 (no released binary has a 4).
pub(crate) const MIGRATIONS: &[Migration] = &[
    MIGRATION_1,
    MIGRATION_2,
    MIGRATION_3,
    MIGRATION_5,
    MIGRATION_6,
    MIGRATION_7,
    MIGRATION_8,
    MIGRATION_9,
];

/// The asks (docs/contract.md §8).
const MIGRATION_1: Migration = Migration {
    version: 1,
    compatible_from: 1,
    sqlite: "
        CREATE TABLE asks (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            scope TEXT NOT NULL,
            request_hash TEXT NOT NULL,
            host_keyed INTEGER NOT NULL,
            request TEXT NOT NULL,
            asker TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            grace_ms INTEGER NOT NULL,
            attached INTEGER NOT NULL,
            detached_at INTEGER,
            state TEXT NOT NULL DEFAULT 'open',
            outcome TEXT,
            closed_at INTEGER,
            delivered_at INTEGER,
            seq INTEGER NOT NULL
        );
        CREATE INDEX asks_by_key ON asks (scope, request_hash, id);
        CREATE INDEX asks_open ON asks (id) WHERE state = 'open';
        CREATE INDEX asks_history ON asks (closed_at, id) WHERE state <> 'open';
        CREATE INDEX asks_by_seq ON asks (seq);
        CREATE UNIQUE INDEX asks_one_open_per_key ON asks (scope, request_hash) WHERE state = 'open';
        INSERT INTO meta (key, value) VALUES ('seq', 0);
    ",
    postgres: "
        CREATE TABLE ask_user_asks (
            id BIGSERIAL PRIMARY KEY,
            scope TEXT NOT NULL,
            request_hash TEXT NOT NULL,
            host_keyed BOOLEAN NOT NULL,
            request TEXT NOT NULL,
            asker TEXT NOT NULL,
            created_at BIGINT NOT NULL,
            grace_ms BIGINT NOT NULL,
            attached BOOLEAN NOT NULL,
            detached_at BIGINT,
            state TEXT NOT NULL DEFAULT 'open',
            outcome TEXT,
            closed_at BIGINT,
            delivered_at BIGINT
        );
        CREATE INDEX ask_user_asks_by_key ON ask_user_asks (scope, request_hash, id);
        CREATE INDEX ask_user_asks_open ON ask_user_asks (id) WHERE state = 'open';
        CREATE INDEX ask_user_asks_history ON ask_user_asks (closed_at, id) WHERE state <> 'open';
        CREATE UNIQUE INDEX ask_user_asks_one_open_per_key ON ask_user_asks (scope, request_hash)
            WHERE state = 'open';
    ",
};

/// Channels (docs/contract.md §10), additive: single-use answer tokens (hashed) and, per ask and
/// channel, the claim to send its message, the message's reference and the claim to update it
/// on close.
const MIGRATION_2: Migration = Migration {
    version: 2,
    compatible_from: 1,
    sqlite: "
        CREATE TABLE channel_tokens (
            hash TEXT PRIMARY KEY,
            ask INTEGER NOT NULL,
            channel TEXT NOT NULL,
            choice TEXT NOT NULL,
            user_id TEXT,
            used_at INTEGER
        );
        CREATE INDEX channel_tokens_by_ask ON channel_tokens (ask);
        CREATE TABLE channel_messages (
            ask INTEGER NOT NULL,
            channel TEXT NOT NULL,
            reference TEXT,
            closed_at INTEGER,
            PRIMARY KEY (ask, channel)
        );
    ",
    postgres: "
        CREATE TABLE ask_user_channel_tokens (
            hash TEXT PRIMARY KEY,
            ask BIGINT NOT NULL,
            channel TEXT NOT NULL,
            choice TEXT NOT NULL,
            user_id TEXT,
            used_at BIGINT
        );
        CREATE INDEX ask_user_channel_tokens_by_ask ON ask_user_channel_tokens (ask);
        CREATE TABLE ask_user_channel_messages (
            ask BIGINT NOT NULL,
            channel TEXT NOT NULL,
            reference TEXT,
            closed_at BIGINT,
            PRIMARY KEY (ask, channel)
        );
    ",
};

/// Hashed bearer secrets (the hub's agent tokens, login links, sessions; docs/contract.md §9).
/// Additive: an older binary ignores the table.
const MIGRATION_3: Migration = Migration {
    version: 3,
    compatible_from: 1,
    sqlite: "
        CREATE TABLE secrets (
            hash TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            name TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            expires_at INTEGER,
            used_at INTEGER,
            revoked_at INTEGER
        );
        CREATE INDEX secrets_by_name ON secrets (kind, name);
    ",
    postgres: "
        CREATE TABLE ask_user_secrets (
            hash TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            name TEXT NOT NULL,
            created_at BIGINT NOT NULL,
            expires_at BIGINT,
            used_at BIGINT,
            revoked_at BIGINT
        );
        CREATE INDEX ask_user_secrets_by_name ON ask_user_secrets (kind, name);
    ",
};

/// Named leases (docs/contract.md §10 "several hub replicas"): one holder at a time until a
/// time, e.g. the one replica that polls Telegram's `getUpdates`. Additive: an older binary
/// ignores the table.
const MIGRATION_5: Migration = Migration {
    version: 5,
    compatible_from: 1,
    sqlite: "
        CREATE TABLE leases (
            name TEXT PRIMARY KEY,
            holder TEXT NOT NULL,
            until INTEGER NOT NULL
        );
    ",
    postgres: "
        CREATE TABLE ask_user_leases (
            name TEXT PRIMARY KEY,
            holder TEXT NOT NULL,
            until BIGINT NOT NULL
        );
    ",
};

/// Leases of attached asks (docs/contract.md §8 "Liveness"), additive: `lease_until` is when an
/// attached ask's caller must have renewed by. An older binary ignores the column: the asks it
/// writes have none (NULL: trusted as attached until they detach, as before).
const MIGRATION_6: Migration = Migration {
    version: 6,
    compatible_from: 1,
    sqlite: "
        ALTER TABLE asks ADD COLUMN lease_until INTEGER;
        CREATE INDEX asks_leased ON asks (lease_until)
            WHERE state = 'open' AND attached = 1 AND lease_until IS NOT NULL;
    ",
    postgres: "
        ALTER TABLE ask_user_asks ADD COLUMN lease_until BIGINT;
        CREATE INDEX ask_user_asks_leased ON ask_user_asks (lease_until)
            WHERE state = 'open' AND attached AND lease_until IS NOT NULL;
    ",
};

/// Namespaces (docs/contract.md §8 "Exactly once, made precise"), additive: every ask belongs
/// to a namespace by id (the local user, an MCP client, a hub token), part of its key. Asks of
/// older binaries are in the empty namespace. One open ask per key is now enforced per
/// namespace, and for host keys only: two live unkeyed callers asking the same question hold an
/// ask each. An older binary keeps working beside (it ignores the column and finds keys
/// across namespaces, as it did).
const MIGRATION_7: Migration = Migration {
    version: 7,
    compatible_from: 1,
    sqlite: "
        ALTER TABLE asks ADD COLUMN namespace TEXT NOT NULL DEFAULT '';
        DROP INDEX asks_one_open_per_key;
        CREATE UNIQUE INDEX asks_one_open_per_host_key ON asks (namespace, scope, request_hash)
            WHERE state = 'open' AND host_keyed = 1;
        CREATE INDEX asks_by_namespace_key ON asks (namespace, scope, request_hash, id);
    ",
    postgres: "
        ALTER TABLE ask_user_asks ADD COLUMN namespace TEXT NOT NULL DEFAULT '';
        DROP INDEX ask_user_asks_one_open_per_key;
        CREATE UNIQUE INDEX ask_user_asks_one_open_per_host_key
            ON ask_user_asks (namespace, scope, request_hash) WHERE state = 'open' AND host_keyed;
        CREATE INDEX ask_user_asks_by_namespace_key
            ON ask_user_asks (namespace, scope, request_hash, id);
    ",
};

/// The open asks of a namespace, additive: the hub counts a token's open asks before each new
/// one (its quota), which otherwise read every ask the token ever made, closed ones too.
const MIGRATION_8: Migration = Migration {
    version: 8,
    compatible_from: 1,
    sqlite: "
        CREATE INDEX asks_open_by_namespace ON asks (namespace) WHERE state = 'open';
    ",
    postgres: "
        CREATE INDEX ask_user_asks_open_by_namespace ON ask_user_asks (namespace)
            WHERE state = 'open';
    ",
};

/// The number of open asks, kept by the database itself (docs/decisions.md "The inbox's count
/// of open asks is kept, not counted"), additive: triggers on the asks table add one for each
/// ask that opens and take one off for each that closes or is deleted open, in the transaction
/// of the change, whatever statement or binary made it (an older binary's writes keep it right
/// too, and a rollback takes its change back with it). The triggers are created before the
/// count is taken: on Postgres `CREATE TRIGGER` locks out writers until this migration commits,
/// so no change falls between the count and the first trigger.
///
/// SQLite keeps it in `meta` (`open_asks`), a row trigger each: its writers are serialised
/// anyway, and a row has no versions to pile up. Postgres keeps it in 16 rows of
/// `ask_user_open_asks`, one per `pg_backend_pid() % 16`, summed when read: a transaction only
/// ever changes its own connection's row, so writers on different connections (group commits
/// in flight, other replicas) do not queue on one row's lock until each other's commit, and a
/// transaction holds at most one counter row (no lock cycles). It adds once per statement, never
/// once per row: a row trigger that updated a counter row made one version of it per ask in one
/// transaction (100,000 for a bulk insert: each update walked the versions before it, minutes,
/// and the table stayed bloated until vacuumed). Inserts and deletes count their rows from the
/// statement's transition tables. An update counts in a row trigger that fires only for an
/// ask that opened or closed (its `WHEN`) and notes the change in a transaction-local setting
/// (rolled back with its statement), which a statement trigger adds to the count once; both
/// fire only for updates that set `state` (a renewal or a delivery runs no trigger — transition
/// tables would have run one for every update: +0.1 ms on a renewal's round trip).
const MIGRATION_9: Migration = Migration {
    version: 9,
    compatible_from: 1,
    sqlite: "
        CREATE TRIGGER asks_count_opened AFTER INSERT ON asks WHEN new.state = 'open'
        BEGIN UPDATE meta SET value = value + 1 WHERE key = 'open_asks'; END;
        CREATE TRIGGER asks_count_changed AFTER UPDATE OF state ON asks
            WHEN (old.state = 'open') <> (new.state = 'open')
        BEGIN
            UPDATE meta SET value = value + CASE WHEN new.state = 'open' THEN 1 ELSE -1 END
            WHERE key = 'open_asks';
        END;
        CREATE TRIGGER asks_count_deleted AFTER DELETE ON asks WHEN old.state = 'open'
        BEGIN UPDATE meta SET value = value - 1 WHERE key = 'open_asks'; END;
        INSERT INTO meta (key, value)
            SELECT 'open_asks', count(*) FROM asks WHERE state = 'open';
    ",
    postgres: "
        CREATE TABLE ask_user_open_asks (slot INTEGER PRIMARY KEY, n BIGINT NOT NULL);
        CREATE FUNCTION ask_user_count_open() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            d BIGINT := 0;
        BEGIN
            IF TG_OP = 'TRUNCATE' THEN
                UPDATE ask_user_open_asks SET n = 0;
                RETURN NULL;
            ELSIF TG_LEVEL = 'ROW' THEN
                -- An update that opened or closed this ask: noted in the transaction, added
                -- once at the end of its statement (below).
                PERFORM set_config('ask_user.open_delta', (coalesce(nullif(
                    current_setting('ask_user.open_delta', true), ''), '0')::BIGINT
                    + CASE WHEN NEW.state = 'open' THEN 1 ELSE -1 END)::TEXT, true);
                RETURN NULL;
            ELSIF TG_OP = 'INSERT' THEN
                SELECT count(*) INTO d FROM ask_user_asks_after WHERE state = 'open';
            ELSIF TG_OP = 'DELETE' THEN
                SELECT -count(*) INTO d FROM ask_user_asks_before WHERE state = 'open';
            ELSE
                d := coalesce(nullif(current_setting('ask_user.open_delta', true), ''), '0');
                IF d <> 0 THEN
                    PERFORM set_config('ask_user.open_delta', '0', true);
                END IF;
            END IF;
            IF d <> 0 THEN
                UPDATE ask_user_open_asks SET n = n + d WHERE slot = pg_backend_pid() % 16;
            END IF;
            RETURN NULL;
        END $$;
        CREATE TRIGGER ask_user_asks_count_inserted AFTER INSERT ON ask_user_asks
            REFERENCING NEW TABLE AS ask_user_asks_after
            FOR EACH STATEMENT EXECUTE FUNCTION ask_user_count_open();
        CREATE TRIGGER ask_user_asks_count_changed AFTER UPDATE OF state ON ask_user_asks
            FOR EACH ROW WHEN ((OLD.state = 'open') <> (NEW.state = 'open'))
            EXECUTE FUNCTION ask_user_count_open();
        CREATE TRIGGER ask_user_asks_count_updated AFTER UPDATE OF state ON ask_user_asks
            FOR EACH STATEMENT EXECUTE FUNCTION ask_user_count_open();
        CREATE TRIGGER ask_user_asks_count_deleted AFTER DELETE ON ask_user_asks
            REFERENCING OLD TABLE AS ask_user_asks_before
            FOR EACH STATEMENT EXECUTE FUNCTION ask_user_count_open();
        CREATE TRIGGER ask_user_asks_count_truncated AFTER TRUNCATE ON ask_user_asks
            FOR EACH STATEMENT EXECUTE FUNCTION ask_user_count_open();
        INSERT INTO ask_user_open_asks (slot, n)
            SELECT s, CASE WHEN s = 0 THEN (SELECT count(*) FROM ask_user_asks WHERE state = 'open')
                      ELSE 0 END
            FROM generate_series(0, 15) AS s;
    ",
};

/// Checks a store's recorded versions against this binary: `Ok(true)` when migrations are to
/// be applied, `Ok(false)` when the store is usable as is.
pub(crate) fn check(location: &str, found: i64, compatible_from: i64) -> Result<bool, Error> {
    if compatible_from > SCHEMA_VERSION {
        return Err(Error::TooNew {
            location: location.to_owned(),
            found,
            needs: compatible_from,
            known: SCHEMA_VERSION,
        });
    }
    Ok(found < SCHEMA_VERSION)
}
