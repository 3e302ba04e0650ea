//! The PostgreSQL store's schema: versioned migrations, applied in order under an advisory lock
//! (instances starting together migrate once), each recorded in `toolsmith_schema`. A database
//! whose schema is newer than this build is refused with a clear error, never written to.

use tokio_postgres::Client;

use super::storage;
use crate::runtime::store::{StoreError, StorePart};

/// The migrations, in order; the version of each is its position plus one. Append only: a
/// released migration is never edited.
const MIGRATIONS: &[&str] = &[
    // 1: the instances (each holds a lease it renews) and the waiting calls. A call row has two
    // tags: `call_tag` over what the call is (written once), `state_tag` over where it is in its
    // life (rewritten by each claim, computable before the claim, so claiming is one UPDATE).
    "CREATE TABLE toolsmith_instances (
        id TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        pid BIGINT NOT NULL,
        lease_ms BIGINT NOT NULL,
        started_at TIMESTAMPTZ NOT NULL DEFAULT now(),
        heartbeat_at TIMESTAMPTZ NOT NULL DEFAULT now());
     CREATE TABLE toolsmith_pending (
        tool_call_id TEXT PRIMARY KEY,
        tool_name TEXT,
        kind TEXT,
        call_json TEXT,
        created_at_ms BIGINT,
        call_tag BYTEA,
        state TEXT,
        owner_instance TEXT,
        owner_pid BIGINT,
        claimed_at_ms BIGINT,
        state_tag BYTEA);
     CREATE INDEX toolsmith_pending_by_age ON toolsmith_pending (created_at_ms, tool_call_id);
     CREATE INDEX toolsmith_pending_by_owner ON toolsmith_pending (owner_instance);",
    // 2: the receipts of tools declared idempotent, one per idempotency key (by its digest):
    // running (owner, claim time), interrupted, or done (the result); `tag` covers every column.
    "CREATE TABLE toolsmith_receipts (
        key_digest TEXT PRIMARY KEY,
        tool_name TEXT,
        args_digest TEXT,
        state TEXT,
        owner_instance TEXT,
        owner_pid BIGINT,
        claimed_at_ms BIGINT,
        result_json TEXT,
        finished_at_ms BIGINT,
        tag BYTEA);",
    // 3: bus messages too large for a NOTIFY payload, for one instance (`bus`): it reads and
    // deletes its row; rows nobody took are swept with the retention.
    "CREATE TABLE toolsmith_bus (
        id BIGSERIAL PRIMARY KEY,
        target TEXT NOT NULL,
        payload TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT now());",
    // 4: the background-task queue. `task_tag` covers what runs (written once), `outcome_tag`
    // how it ended (written by the final transition); leases are on the database's clock.
    "CREATE TABLE toolsmith_tasks (
        task_id TEXT PRIMARY KEY,
        tool_name TEXT,
        task_json TEXT,
        created_at_ms BIGINT,
        task_tag BYTEA,
        max_retries BIGINT NOT NULL DEFAULT 0,
        state TEXT NOT NULL,
        attempts BIGINT NOT NULL DEFAULT 0,
        lease_owner TEXT,
        lease_expires_at_ms BIGINT,
        output_json TEXT,
        error_json TEXT,
        outcome_tag BYTEA,
        updated_at_ms BIGINT);
     CREATE INDEX toolsmith_tasks_claimable ON toolsmith_tasks (created_at_ms, task_id) WHERE state IN ('queued', 'running');
     CREATE INDEX toolsmith_tasks_by_state ON toolsmith_tasks (state, created_at_ms);",
    // 5: the pins of remote tools (`PostgresPins`): the pinned and the last seen definition of
    // each tool per provider and connection; `tag` covers every column.
    "CREATE TABLE toolsmith_pins (
        provider TEXT NOT NULL,
        connection TEXT NOT NULL,
        tool TEXT NOT NULL,
        pinned TEXT NOT NULL,
        seen TEXT,
        tag BYTEA,
        PRIMARY KEY (provider, connection, tool));",
    // 6: the full results of cut calls, kept for their callers (`results`): `seq` orders them by
    // when they were (re)written, for the count bound; `expires_at_ms` is the writer's time to
    // live, for the retention; `tag` covers every column but `seq`.
    "CREATE TABLE toolsmith_results (
        call_id TEXT PRIMARY KEY,
        seq BIGSERIAL NOT NULL,
        owner TEXT,
        result_text TEXT,
        result_json TEXT,
        created_at_ms BIGINT,
        expires_at_ms BIGINT,
        tag BYTEA);
     CREATE INDEX toolsmith_results_by_seq ON toolsmith_results (seq);
     CREATE INDEX toolsmith_results_by_expiry ON toolsmith_results (expires_at_ms);",
    // 7: the audit trail of decisions (`audit`): `seq` orders the rows by when they were
    // appended and is not tagged; `tag` covers every other column; `record_json` is the whole
    // record (never argument values).
    "CREATE TABLE toolsmith_audit (
        seq BIGSERIAL PRIMARY KEY,
        id TEXT NOT NULL,
        at_ms BIGINT,
        call_id TEXT,
        record_json TEXT,
        tag BYTEA);
     CREATE INDEX toolsmith_audit_by_time ON toolsmith_audit (at_ms);
     CREATE INDEX toolsmith_audit_by_call ON toolsmith_audit (call_id);",
    // 8: the credentials of imported servers (`credentials`: `toolsmith mcp login`), one row per
    // name, the secret opaque bytes, `tag` over the name and the secret.
    "CREATE TABLE toolsmith_credentials (
        name TEXT PRIMARY KEY,
        secret BYTEA NOT NULL,
        tag BYTEA NOT NULL);",
];

/// The schema version this build writes.
pub(crate) const LATEST: i32 = MIGRATIONS.len() as i32;

/// What a migration did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Migrated {
    /// The version found (0: a fresh database).
    pub from: i32,
    /// The version now.
    pub to: i32,
}

/// The error of a database whose schema is newer than this build.
fn too_new(found: i32) -> StoreError {
    StoreError::storage_of(
        StorePart::Store,
        format!(
            "the database's toolsmith schema is version {found}, newer than this build's version {LATEST}: \
         upgrade toolsmith (an older build never writes to a newer schema)"
        ),
    )
}

/// Creates `schema` when given, then applies the migrations this database lacks, in one
/// transaction holding an advisory lock (so concurrent instances apply each once).
pub(crate) async fn migrate(client: &mut Client, schema: Option<&str>) -> Result<Migrated, StoreError> {
    const WHAT: &str = "cannot migrate the store's schema";
    let tx = client.transaction().await.map_err(storage(StorePart::Store, WHAT))?;
    let lock = format!("toolsmith schema {}", schema.unwrap_or("<search_path>"));
    tx.execute("SELECT pg_advisory_xact_lock(hashtext($1))", &[&lock])
        .await
        .map_err(storage(StorePart::Store, WHAT))?;
    // The schema given, else the first one the connection's `search_path` names (a URL's
    // `options=-c search_path=NAME`), when it does not exist yet.
    let named = match schema {
        Some(schema) => Some(schema.to_owned()),
        None => search_path_schema(&tx).await?,
    };
    if let Some(schema) = named {
        let create = format!("CREATE SCHEMA IF NOT EXISTS \"{schema}\"");
        tx.batch_execute(&create).await.map_err(storage(StorePart::Store, WHAT))?;
    }
    let table = "CREATE TABLE IF NOT EXISTS toolsmith_schema (version INTEGER PRIMARY KEY, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())";
    tx.batch_execute(table).await.map_err(storage(StorePart::Store, WHAT))?;
    let from = current(&tx).await?;
    if from > LATEST {
        return Err(too_new(from));
    }
    for (version, sql) in (1..).zip(MIGRATIONS).skip(usize::try_from(from).unwrap_or(0)) {
        tx.batch_execute(sql).await.map_err(storage(StorePart::Store, WHAT))?;
        let record = "INSERT INTO toolsmith_schema (version) VALUES ($1)";
        tx.execute(record, &[&version]).await.map_err(storage(StorePart::Store, WHAT))?;
        tracing::info!(version, "applied a migration of the store's schema");
    }
    tx.commit().await.map_err(storage(StorePart::Store, WHAT))?;
    Ok(Migrated { from, to: LATEST })
}

/// The first schema of the connection's `search_path` when none of it exists and it is a plain
/// identifier (letters, digits, `_`), to be created; `None` otherwise.
async fn search_path_schema(client: &impl tokio_postgres::GenericClient) -> Result<Option<String>, StoreError> {
    let row = client
        .query_one("SELECT current_schema() IS NULL, current_setting('search_path')", &[])
        .await
        .map_err(storage(StorePart::Store, "cannot read the connection's search_path"))?;
    let (missing, path): (bool, String) = (row.get(0), row.get(1));
    let first = path.split(',').next().unwrap_or_default().trim().trim_matches('"');
    let plain = !first.is_empty()
        && first.len() <= 63
        && !first.starts_with(|c: char| c.is_ascii_digit())
        && first.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    Ok((missing && plain).then(|| first.to_owned()))
}

/// The schema version recorded (0 when none is).
async fn current(client: &impl tokio_postgres::GenericClient) -> Result<i32, StoreError> {
    let row = client
        .query_one("SELECT COALESCE(MAX(version), 0) FROM toolsmith_schema", &[])
        .await;
    Ok(row
        .map_err(storage(StorePart::Store, "cannot read the store's schema version"))?
        .get(0))
}

/// Checks, without changing anything, that the database holds this build's schema.
pub(crate) async fn check(client: &Client) -> Result<(), StoreError> {
    let exists = client.query_one("SELECT to_regclass('toolsmith_schema') IS NOT NULL", &[]).await;
    let exists: bool = exists
        .map_err(storage(StorePart::Store, "cannot read the store's schema version"))?
        .get(0);
    let found = if exists { current(client).await? } else { 0 };
    match found {
        f if f > LATEST => Err(too_new(f)),
        f if f < LATEST => Err(StoreError::storage_of(
            StorePart::Store,
            format!(
                "the database's toolsmith schema is version {f}, older than this build's version {LATEST}: \
             run `{cmd} store migrate --store URL` first",
                cmd = crate::error::operator(),
            ),
        )),
        _ => Ok(()),
    }
}
