//! Whose account a remote tool's call uses, as Composio's and Arcade's tools work it out.
//!
//! Owns [`caller_id`] (the caller a resolved tool's call acts for) and [`non_empty_id`]; the
//! scope rule itself ([`connection_owner`]) is tool-core's, shared with its fan-out.

use serde_json::{Map, Value};
use tool_core::provider::{Scope, connection_owner};
use tool_core::{Caller, ToolCallInfo};

/// An id as given, trimmed; `None` when it is missing or blank.
pub(crate) fn non_empty_id(id: Option<&str>) -> Option<String> {
    id.map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned)
}

/// The caller a resolved tool's call acts for: the subject of its authenticated [`Caller`]
/// (whatever the request context says: an authenticated caller never acts in another's
/// bucket), else the resource id in the call's request context, else the call's own resource
/// id, else the resource id of the context the tool was resolved with; `None` when none names
/// one (the provider then decides: a configured user, an opted-in shared id, or an error).
pub(crate) fn caller_id(call: &ToolCallInfo, call_context: &Map<String, Value>, resolved_with: &Map<String, Value>) -> Option<String> {
    let from = |ctx: &Map<String, Value>| connection_owner(Scope::CallerSupplied, None, ctx, None).ok();
    non_empty_id(call.data.caller.as_deref().and_then(Caller::subject))
        .or_else(|| from(call_context))
        .or_else(|| non_empty_id(call.data.resource_id.as_deref()))
        .or_else(|| from(resolved_with))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn ctx(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn an_authenticated_caller_comes_first_then_the_contexts() {
        let c = ctx(json!({"mastra__resourceId": "user-1"}));
        let resolved = ctx(json!({"resource_id": "resolver"}));
        let call = |resource: Option<&str>, caller: Option<Caller>| ToolCallInfo {
            data: std::sync::Arc::new(tool_core::CallData {
                resource_id: resource.map(str::to_owned),
                caller: caller.map(std::sync::Arc::new),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(
            caller_id(&call(Some("call"), None), &c, &resolved).as_deref(),
            Some("user-1"),
            "the call's context first"
        );
        assert_eq!(
            caller_id(&call(Some(" call "), None), &Map::new(), &resolved).as_deref(),
            Some("call")
        );
        assert_eq!(
            caller_id(&call(Some(" "), None), &Map::new(), &resolved).as_deref(),
            Some("resolver")
        );
        assert_eq!(caller_id(&call(None, None), &Map::new(), &Map::new()), None);
        let alice = || Some(Caller::new("alice", ["mcp"]));
        assert_eq!(
            caller_id(&call(Some("call"), alice()), &c, &resolved).as_deref(),
            Some("alice"),
            "an authenticated caller's subject over whatever the context says"
        );
        let holder = Some(Caller::static_token());
        assert_eq!(
            caller_id(&call(None, holder), &c, &resolved).as_deref(),
            Some("user-1"),
            "the static-token holder has no subject of its own"
        );
    }
}
