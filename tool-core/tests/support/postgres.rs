//! The PostgreSQL the tests run against: its URL from `TOOLSMITH_TEST_POSTGRES`, and a schema of
//! their own per test (a unique name), so tests running at once never see each other's rows.
//!
//! Without the variable the PostgreSQL tests FAIL, saying how to set it; a developer without
//! PostgreSQL opts out explicitly with `TOOLSMITH_SKIP_POSTGRES=1`, and the tests are then
//! reported as ignored, with the reason printed.

#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};

/// The variable holding the test database's URL.
pub const URL_ENV: &str = "TOOLSMITH_TEST_POSTGRES";
/// The explicit opt-out.
pub const SKIP_ENV: &str = "TOOLSMITH_SKIP_POSTGRES";

/// Where the PostgreSQL tests stand.
pub enum Postgres {
    /// Run them against this URL.
    Url(String),
    /// Skip them, for this reason (the explicit opt-out).
    Skipped(String),
    /// Fail them with this message (no URL and no opt-out).
    Missing(String),
}

/// Reads the environment.
pub fn postgres() -> Postgres {
    if std::env::var(SKIP_ENV).is_ok_and(|v| v == "1") {
        return Postgres::Skipped(format!("PostgreSQL tests skipped: {SKIP_ENV}=1 is set"));
    }
    match std::env::var(URL_ENV) {
        Ok(url) if !url.is_empty() => Postgres::Url(url),
        _ => Postgres::Missing(format!(
            "the PostgreSQL tests need a database: set {URL_ENV} (e.g. postgres://postgres@127.0.0.1:5432/test), \
             or opt out explicitly with {SKIP_ENV}=1"
        )),
    }
}

/// A connection for the test's own statements (its connection task spawned).
pub async fn connect(url: &str) -> Result<tokio_postgres::Client, String> {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls).await.map_err(|e| {
        let cause = std::error::Error::source(&e).map(|c| format!(": {c}")).unwrap_or_default();
        format!("cannot reach PostgreSQL at {URL_ENV}={url} ({e}{cause}); start it, fix {URL_ENV}, or opt out with {SKIP_ENV}=1")
    })?;
    tokio::spawn(connection);
    Ok(client)
}

/// A fresh, empty schema with a name no other test uses.
pub async fn fresh_schema(url: &str) -> Result<String, String> {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .subsec_nanos();
    let name = format!("ts_test_{}_{}_{nanos}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    let client = connect(url).await?;
    client
        .batch_execute(&format!("CREATE SCHEMA {name}"))
        .await
        .map_err(|e| format!("cannot create schema {name}: {e:?}"))?;
    Ok(name)
}

/// Drops a test's schema (best effort: a failed test leaves it for inspection only when this
/// is not reached).
pub async fn drop_schema(url: &str, schema: &str) {
    if let Ok(client) = connect(url).await {
        let _ = client.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE")).await;
    }
}

/// `url` with the schema as the connection's `search_path` (what a command line is given).
pub fn url_in_schema(url: &str, schema: &str) -> String {
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}options=-c%20search_path%3D{schema}")
}
