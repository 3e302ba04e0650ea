//! Where each tool of a catalog sits for tool search: loaded up front or deferred until the
//! model finds it, and under which namespace.
//!
//! Owns [`Placement`] (one tool's answer), the catalog's overrides of the tools' own defaults
//! (a [`Deferral`] over `#[tool(defer_loading)]`, namespace rules over
//! `#[tool(namespace = "...")]`) and [`InvalidNamespace`]. Which
//! tools load up front is the agent's decision, so a catalog's rule wins over the tool's
//! default. Must not write any provider's format (that is `deferred`'s).

use crate::context::Deferral;
use crate::spec::{ToolSpec, is_namespace};

/// A name that cannot be a namespace (see [`is_namespace`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a namespace: use 1 to 64 of a-z, A-Z, 0-9, `_`, `-`")]
pub struct InvalidNamespace(pub String);

/// Where one tool sits: deferred or loaded up front, and its namespace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Placement {
    /// Left out of requests until the model finds it with tool search.
    pub deferred: bool,
    /// The namespace it is listed and searched under.
    pub namespace: Option<String>,
}

/// What selects the tools a namespace rule applies to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Selector {
    /// Tools carrying this tag.
    Tag(String),
    /// Tools defined in this module path or below it, or in this crate.
    Module(String),
}

/// A catalog's overrides, applied in order: the first namespace rule that selects a tool wins,
/// then the tool's own namespace.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Overrides {
    pub deferral: Deferral,
    pub namespaces: Vec<(Selector, String)>,
    /// Descriptions of namespaces, shown to the model where a format lists namespaces.
    pub descriptions: Vec<(String, String)>,
    /// Whether exports mark their last tool as a cache breakpoint (Anthropic's `cache_control`).
    pub cache_tools: bool,
}

impl Overrides {
    /// Where `spec`'s tool sits under these overrides.
    pub fn place(&self, spec: &ToolSpec) -> Placement {
        let deferred = self.deferral.defers(spec);
        let namespace = self
            .namespaces
            .iter()
            .find(|(selector, _)| selects(selector, spec))
            .map(|(_, ns)| ns.clone())
            .or_else(|| spec.presentation.namespace.clone());
        Placement { deferred, namespace }
    }

    /// The description set for a namespace.
    pub fn description(&self, namespace: &str) -> Option<&str> {
        self.descriptions.iter().find(|(n, _)| n == namespace).map(|(_, d)| d.as_str())
    }
}

fn selects(selector: &Selector, spec: &ToolSpec) -> bool {
    match selector {
        Selector::Tag(tag) => spec.presentation.tags.iter().any(|t| t == tag),
        Selector::Module(path) => crate::registry::defined_in(&spec.source.crate_name, &spec.source.module_path, path),
    }
}

/// Checks a namespace a catalog is given.
pub(crate) fn checked(namespace: String) -> Result<String, InvalidNamespace> {
    if is_namespace(&namespace) {
        Ok(namespace)
    } else {
        Err(InvalidNamespace(namespace))
    }
}
