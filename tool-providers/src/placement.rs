//! Where a provider's imported tools sit for tool search: deferred or loaded up front, and
//! under which namespace (the toolkit's, or the MCP server's).
//!
//! Owns [`ImportPlacement`] and the namespace a group name becomes. Must not decide which tools
//! are imported (the providers' allow-lists do).

use tool_core::tool::DynamicToolBuilder;

/// How a provider places the tools it imports (its default: loaded up front, no namespace).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ImportPlacement {
    /// Every imported tool is deferred (`defer_loading`).
    pub defer: bool,
    /// Every imported tool is put in its group's namespace (toolkit, server).
    pub by_group: bool,
}

impl ImportPlacement {
    /// `builder` placed: deferred, and in the namespace of `group` (see [`namespace_of`]).
    pub(crate) fn apply(&self, mut builder: DynamicToolBuilder, group: &str) -> DynamicToolBuilder {
        if self.defer {
            builder = builder.defer_loading();
        }
        if self.by_group
            && let Some(namespace) = namespace_of(group)
        {
            builder = builder.namespace(namespace);
        }
        builder
    }
}

/// The namespace a toolkit or server name becomes: lower-cased, each character outside
/// `a-z 0-9 _ -` as `_`, at most 64 characters; `None` for a name without a letter or digit.
///
/// ```ignore
/// assert_eq!(namespace_of("Google Calendar").as_deref(), Some("google_calendar"));
/// ```
pub(crate) fn namespace_of(group: &str) -> Option<String> {
    if !group.chars().any(char::is_alphanumeric) {
        return None;
    }
    let namespace: String = group
        .trim()
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '_' | '-') => c,
            _ => '_',
        })
        .take(64)
        .collect();
    Some(namespace)
}

#[cfg(test)]
mod tests {
    use super::namespace_of;

    #[test]
    fn group_names_become_namespaces() {
        assert_eq!(namespace_of("gmail").as_deref(), Some("gmail"));
        assert_eq!(namespace_of("Google Calendar").as_deref(), Some("google_calendar"));
        assert_eq!(namespace_of("  ").as_deref(), None);
        assert_eq!(namespace_of(&"x".repeat(80)).map(|n| n.len()), Some(64));
        assert!(tool_core::spec::is_namespace(&namespace_of("Straße.v2").unwrap()));
    }
}
