//! Tool definitions fetched several at a time and kept for a while: what resolving the same
//! tools again (per request, per caller) costs no request for.
//!
//! Owns the per-provider cache of definitions (by URL, with when each was fetched, shared by
//! a provider's clones) in the provider's own typed form. Knows nothing of what a definition
//! says; fetching goes through [`Http`].

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde::de::DeserializeOwned;
use tool_core::provider::ProviderError;

use crate::http::Http;

/// Tool definitions fetched at once by one resolution.
const FETCHES_AT_ONCE: usize = 8;

/// Tool definitions kept at most (past it, expired ones go, then all).
const KEPT: usize = 2048;

/// A provider's fetched tool definitions of type `D`.
pub(crate) struct Definitions<D> {
    /// How long a fetched definition is used before it is fetched again (zero: always).
    pub(crate) ttl: Duration,
    kept: Arc<Mutex<HashMap<String, (Instant, D)>>>,
}

impl<D> Clone for Definitions<D> {
    fn clone(&self) -> Self {
        Definitions {
            ttl: self.ttl,
            kept: self.kept.clone(),
        }
    }
}

impl<D> Default for Definitions<D> {
    fn default() -> Self {
        Definitions {
            ttl: Duration::from_secs(300),
            kept: Arc::default(),
        }
    }
}

impl<D: DeserializeOwned + Clone> Definitions<D> {
    /// The definitions at these paths, in their order (`None`: the platform has no such
    /// tool), fetched [`FETCHES_AT_ONCE`] at a time; a definition fetched less than `ttl` ago
    /// is not fetched again. Absences and failures are not remembered.
    pub(crate) async fn fetch_all(&self, http: &Http, paths: Vec<String>) -> Result<Vec<Option<D>>, ProviderError> {
        futures::stream::iter(paths)
            .map(|path| async move { self.fetch(http, &path).await })
            .buffered(FETCHES_AT_ONCE)
            .collect::<Vec<_>>()
            .await
            .into_iter()
            .collect()
    }

    /// One definition, as [`fetch_all`](Self::fetch_all) fetches it.
    pub(crate) async fn fetch(&self, http: &Http, path: &str) -> Result<Option<D>, ProviderError> {
        let url = format!("{}{path}", http.base_url);
        let kept = || self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if !self.ttl.is_zero()
            && let Some((at, def)) = kept().get(&url)
            && at.elapsed() < self.ttl
        {
            return Ok(Some(def.clone()));
        }
        let def: Option<D> = http.get_or_absent(path).await?;
        if let (Some(def), false) = (&def, self.ttl.is_zero()) {
            let mut kept = kept();
            if kept.len() >= KEPT {
                let ttl = self.ttl;
                kept.retain(|_, (at, _)| at.elapsed() < ttl);
                if kept.len() >= KEPT {
                    kept.clear();
                }
            }
            kept.insert(url, (Instant::now(), def.clone()));
        }
        Ok(def)
    }
}
