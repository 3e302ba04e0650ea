//! The tools a conversation has loaded through tool search ([`LoadedTools`]) and which tools
//! wait to be found ([`Deferral`]).
//!
//! Conversation state, below the catalog (which answers the searches that fill it and places
//! its tools by a [`Deferral`]), the MCP server and the runtime (which refuse, given a loaded
//! set, a deferred tool not in it, and keep both with a waiting call), so a call's data can
//! carry them. Must not search or know providers' formats.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::Value;

use crate::spec::ToolSpec;

/// The generated search tool's name ([`SEARCH_TOOL`](crate::catalog::SEARCH_TOOL) is this).
pub(crate) const SEARCH_TOOL: &str = "search_tools";

/// Which tools wait to be found by tool search, the one rule shared by a
/// [`Catalog`](crate::catalog::Catalog) (its exports), the MCP server
/// ([`McpConfig::deferral`](crate::mcp::McpConfig)) and the runtime's loaded-set check
/// ([`CallOptions::deferral`](crate::CallOptions::deferral)): each tool's own
/// `#[tool(defer_loading)]`, every tool but a core set, none, or the tools carrying a tag.
/// Which tools load up front is the agent's decision, so the rule wins over the tools' own.
/// Cheap to clone (shared).
///
/// ```
/// use tool_core::catalog::Deferral;
/// use tool_core::ToolSpec;
///
/// let spec = |id: &str| ToolSpec::new(id, "A tool", serde_json::json!({"type": "object"}));
/// let rule = Deferral::all_except(["search_web"]);
/// assert!(!rule.defers(&spec("search_web")));
/// assert!(rule.defers(&spec("crm_find")));
/// assert!(!Deferral::as_declared().defers(&spec("crm_find")));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct Deferral(Arc<Rule>);

/// A [`Deferral`]'s rule.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
enum Rule {
    /// As each tool declares.
    #[default]
    AsDeclared,
    /// Every tool but these ids (the core set).
    AllExcept(BTreeSet<String>),
    /// None: every tool loads up front.
    None,
    /// The tools carrying one of these tags; the others load up front.
    Tagged(BTreeSet<String>),
}

impl Deferral {
    /// Each tool as it declares (`#[tool(defer_loading)]`, `DynamicToolBuilder::defer_loading`).
    pub fn as_declared() -> Deferral {
        Deferral::default()
    }

    /// Every tool but the `core` ones (by id), whatever the tools declare.
    pub fn all_except<S: Into<String>>(core: impl IntoIterator<Item = S>) -> Deferral {
        Deferral(Arc::new(Rule::AllExcept(core.into_iter().map(Into::into).collect())))
    }

    /// No tool: every tool loads up front, whatever the tools declare.
    pub fn none() -> Deferral {
        Deferral(Arc::new(Rule::None))
    }

    /// The tools carrying one of `tags` (`#[tool(tags = [...])]`); every other tool loads up
    /// front, whatever the tools declare.
    pub fn tagged<S: Into<String>>(tags: impl IntoIterator<Item = S>) -> Deferral {
        Deferral(Arc::new(Rule::Tagged(tags.into_iter().map(Into::into).collect())))
    }

    /// Whether the tool `spec` describes waits to be found by tool search under this rule. The
    /// generated search tool ([`SEARCH_TOOL`](crate::catalog::SEARCH_TOOL), registered where a
    /// runtime answers it) never does: it is how the others are found.
    pub fn defers(&self, spec: &ToolSpec) -> bool {
        if spec.id == SEARCH_TOOL {
            return false;
        }
        match &*self.0 {
            Rule::AsDeclared => spec.presentation.defer_loading,
            Rule::AllExcept(core) => !core.contains(&spec.id),
            Rule::None => false,
            Rule::Tagged(tags) => spec.presentation.tags.iter().any(|t| tags.contains(t)),
        }
    }

    /// Whether this is [`Deferral::as_declared`].
    pub fn is_as_declared(&self) -> bool {
        matches!(*self.0, Rule::AsDeclared)
    }
}

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
