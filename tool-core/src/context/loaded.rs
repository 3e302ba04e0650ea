//! The tools a conversation has loaded through tool search: [`LoadedTools`].
//!
//! Conversation state, below the catalog (which answers the searches that fill it) and the
//! runtime (which refuses, given it, a deferred tool not in it, and keeps it with a waiting
//! call), so a call's data can carry it. Must not search or know providers' formats.

use std::collections::BTreeSet;

use serde_json::Value;

/// The tools a conversation loaded through search: part of the conversation's state, kept with
/// it (serialisable) so it survives approvals, suspension and resumption elsewhere.
///
/// ```
/// use tool_core::catalog::LoadedTools;
/// let mut loaded = LoadedTools::default();
/// loaded.extend(["crm_find", "crm_update"]);
/// let stored = serde_json::to_string(&loaded).unwrap();
/// assert_eq!(stored, r#"["crm_find","crm_update"]"#);
/// assert!(serde_json::from_str::<LoadedTools>(&stored).unwrap().contains("crm_find"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct LoadedTools(BTreeSet<String>);

impl LoadedTools {
    /// Whether the tool with this id is loaded.
    pub fn contains(&self, id: &str) -> bool {
        self.0.contains(id)
    }

    /// Loads the tools with these ids.
    pub fn extend<S: Into<String>>(&mut self, ids: impl IntoIterator<Item = S>) {
        self.0.extend(ids.into_iter().map(Into::into));
    }

    /// The loaded ids, ordered.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(String::as_str)
    }

    /// How many tools are loaded.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Loads what a [`SEARCH_TOOL`](crate::catalog::SEARCH_TOOL) result loaded (its `loaded` ids): the loaded set can be
    /// rebuilt from a conversation's tool results, wherever the conversation is resumed.
    pub fn record(&mut self, search_result: &Value) {
        let ids = search_result.get("loaded").and_then(Value::as_array).into_iter().flatten();
        self.0.extend(ids.filter_map(Value::as_str).map(str::to_owned));
    }
}
