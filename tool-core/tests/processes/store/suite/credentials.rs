//! The credential store in PostgreSQL (`PostgresStore::credentials`): what one handle stores,
//! another (another instance) reads, replaces and removes; a row edited in the database is
//! refused, never returned.

use std::future::Future;
use std::pin::Pin;

use tool_core::credentials::{CredentialError, CredentialStore};
use tool_core::runtime::PostgresStore;

use super::{options, pg};

type Test = fn(String) -> Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

pub const POSTGRES_TESTS: &[(&str, Test)] = &[("credentials_are_shared_tagged_and_removable", |url| Box::pin(shared(url)))];

async fn shared(url: String) -> Result<(), String> {
    let schema = pg::fresh_schema(&url).await?;
    let a = PostgresStore::connect_with(&url, options(&schema)).await.unwrap().credentials();
    let b = PostgresStore::connect_with(&url, options(&schema)).await.unwrap().credentials();
    a.put("crm".into(), b"{\"token\":\"canary-1\"}".to_vec()).await.unwrap();
    assert_eq!(
        b.get("crm".into()).await.unwrap().as_deref(),
        Some(b"{\"token\":\"canary-1\"}".as_slice())
    );
    b.put("crm".into(), b"{\"token\":\"canary-2\"}".to_vec()).await.unwrap();
    assert_eq!(
        a.get("crm".into()).await.unwrap().as_deref(),
        Some(b"{\"token\":\"canary-2\"}".as_slice())
    );
    assert!(!format!("{a:?}").contains("canary"));
    let client = pg::connect(&url).await?;
    let sql = format!("UPDATE {schema}.toolsmith_credentials SET secret = $1");
    assert_eq!(client.execute(&sql, &[&b"{\"token\":\"forged\"}".to_vec()]).await.unwrap(), 1);
    assert!(matches!(a.get("crm".into()).await, Err(CredentialError::Tampered(n)) if n == "crm"));
    assert!(b.remove("crm".into()).await.unwrap());
    assert!(!a.remove("crm".into()).await.unwrap());
    assert_eq!(a.get("crm".into()).await.unwrap(), None);
    pg::drop_schema(&url, &schema).await;
    Ok(())
}
