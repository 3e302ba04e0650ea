//! The stores a store bench measures side by side in one run: in memory, a SQLite file, and
//! PostgreSQL from `TOOLSMITH_TEST_POSTGRES` (in a schema of its own, dropped when [`Stores`]
//! is; skipped with a note when unset), with the tokio runtime the bench drives them on.

use std::sync::Arc;

use tool_core::runtime::{MemoryStore, PostgresOptions, PostgresStore, SqliteStore};

/// Each store once, opened with `key`.
pub struct Stores {
    pub rt: tokio::runtime::Runtime,
    pub memory: Arc<MemoryStore>,
    pub sqlite: Arc<SqliteStore>,
    pub postgres: Option<Arc<PostgresStore>>,
    /// The database and the schema to drop at the end.
    cleanup: Option<(String, String)>,
    _dir: tempfile::TempDir,
}

impl Stores {
    /// The stores of bench `bench` (it names the PostgreSQL schema).
    pub fn open(bench: &str, key: &[u8]) -> Stores {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        let dir = tempfile::tempdir().expect("a directory");
        let sqlite = SqliteStore::open_with_key(dir.path().join("bench.sqlite3"), key).expect("sqlite");
        let url = std::env::var("TOOLSMITH_TEST_POSTGRES").ok().filter(|u| !u.is_empty());
        let schema = format!("ts_bench_{bench}_{}", std::process::id());
        let postgres = match &url {
            Some(url) => {
                let options = PostgresOptions::default().schema(&schema).expect("a schema").key(key);
                Some(Arc::new(rt.block_on(PostgresStore::connect_with(url, options)).expect("postgres")))
            }
            None => {
                eprintln!("{bench}: TOOLSMITH_TEST_POSTGRES is not set; PostgreSQL is not measured");
                None
            }
        };
        Stores {
            rt,
            memory: Arc::new(MemoryStore::new()),
            sqlite: Arc::new(sqlite),
            postgres,
            cleanup: url.map(|url| (url, schema)),
            _dir: dir,
        }
    }

    /// The stores by name, each made the trait object the bench measures (`|s| s as _`).
    pub fn named<T: ?Sized>(
        &self,
        memory: impl Fn(Arc<MemoryStore>) -> Arc<T>,
        sqlite: impl Fn(Arc<SqliteStore>) -> Arc<T>,
        postgres: impl Fn(Arc<PostgresStore>) -> Arc<T>,
    ) -> Vec<(&'static str, Arc<T>)> {
        let mut all = vec![("memory", memory(self.memory.clone())), ("sqlite", sqlite(self.sqlite.clone()))];
        all.extend(self.postgres.clone().map(|p| ("postgres", postgres(p))));
        all
    }
}

impl Drop for Stores {
    fn drop(&mut self) {
        let Some((url, schema)) = self.cleanup.take() else { return };
        self.rt.block_on(async {
            if let Ok((client, connection)) = tokio_postgres::connect(&url, tokio_postgres::NoTls).await {
                tokio::spawn(connection);
                let _ = client.batch_execute(&format!("DROP SCHEMA IF EXISTS {schema} CASCADE")).await;
            }
        });
    }
}
