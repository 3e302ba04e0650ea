//! What a `tools/call` may carry in its `_meta` for toolsmith: the call's idempotency key, and
//! a signed decision for a call waiting for approval.
//!
//! Owns reading and checking both ([`CallMeta`]) and applying a decision token to the waiting
//! call it names ([`McpServer::decide_by_token`]). The key flows into the call's options (the
//! runtime's receipts make an `idempotent` tool run once per key); the token is verified with
//! the server's decision key and checked against the stored call by the runtime, like any
//! decision. Running and answering calls is `call`'s; asking a user is `ask`'s.

use rmcp::model::{CallToolResponse, JsonObject};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use serde_json::{Value, json};

use super::call::{ToolRef, error_result};
use super::server::McpServer;
use crate::runtime::RuntimeError;

/// The `_meta` key of a call's idempotency key: two calls of an `idempotent` tool with the same
/// key (and arguments) run it once; the second is answered from the first's receipt.
pub const IDEMPOTENCY_KEY_META: &str = "io.toolsmith/idempotencyKey";

/// The `_meta` key of a signed decision token (`tsd1.…`, from `toolsmith pending --token` or
/// `toolsmith call ID --approve --sign`): the call decides the waiting call the token names
/// instead of starting a new one.
pub const DECISION_META: &str = "io.toolsmith/decision";

/// The longest idempotency key taken, in bytes.
pub const MAX_IDEMPOTENCY_KEY: usize = 255;

/// What a call's `_meta` asks of toolsmith.
#[derive(Debug, Default, PartialEq)]
pub(super) struct CallMeta {
    /// The client's idempotency key for the call, checked.
    pub(super) idempotency_key: Option<String>,
    /// A decision token for a waiting call of this tool.
    pub(super) decision: Option<String>,
}

impl CallMeta {
    /// Reads the keys from the request's `_meta` objects (the first that has a key wins); a
    /// malformed value is a protocol error saying what is expected (never echoing it).
    pub(super) fn read<'a>(metas: impl IntoIterator<Item = &'a JsonObject> + Clone) -> Result<CallMeta, ErrorData> {
        let find = |key: &str| metas.clone().into_iter().find_map(|m| m.get(key));
        let idempotency_key = find(IDEMPOTENCY_KEY_META).map(idempotency_key).transpose();
        let idempotency_key = idempotency_key.map_err(|why| ErrorData::invalid_params(why, Some(json!({"meta": IDEMPOTENCY_KEY_META}))))?;
        let decision = match find(DECISION_META) {
            None => None,
            Some(Value::String(token)) => Some(token.clone()),
            Some(_) => {
                return Err(ErrorData::invalid_params(
                    format!("`_meta[\"{DECISION_META}\"]` must be a decision token (a string starting with `tsd1.`)"),
                    Some(json!({"meta": DECISION_META})),
                ));
            }
        };
        Ok(CallMeta { idempotency_key, decision })
    }
}

/// A client's idempotency key: 1 to [`MAX_IDEMPOTENCY_KEY`] printable ASCII characters.
fn idempotency_key(value: &Value) -> Result<String, String> {
    let expected = format!(
        "`_meta[\"{IDEMPOTENCY_KEY_META}\"]` must be a string of 1 to {MAX_IDEMPOTENCY_KEY} printable ASCII characters (letters, digits, punctuation, spaces)"
    );
    let Value::String(key) = value else {
        return Err(format!("{expected}; it is not a string"));
    };
    if key.is_empty() || key.len() > MAX_IDEMPOTENCY_KEY {
        return Err(format!("{expected}; it has {} bytes", key.len()));
    }
    if !key.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return Err(format!("{expected}; it has other characters"));
    }
    Ok(key.clone())
}

/// The key a call runs with: the client's, scoped to the authorized caller when there is one
/// (two callers' keys never meet, so no caller is answered from another's receipt): an OAuth
/// subject's as `mcp:<length>:<subject>:<key>`, the static-token holder's as
/// `mcp:bearer-token:<key>`; without a caller, the key itself.
pub(super) fn scoped_key(key: &str, caller: Option<&crate::Caller>) -> String {
    match caller.map(crate::Caller::subject) {
        Some(Some(subject)) => format!("mcp:{}:{subject}:{key}", subject.len()),
        Some(None) => format!("mcp:bearer-token:{key}"),
        None => key.to_owned(),
    }
}

impl<E: ServerHandler + Clone> McpServer<E> {
    /// Decides the waiting call a signed token names: the token must verify with the server's
    /// key, be unexpired, be brought by the caller who made the call (the token carries its
    /// owner) and name a call of the tool called (whose scopes were checked); the
    /// runtime then holds it to the stored call (its id, arguments, tool version). Anything
    /// wrong is an error result and nothing runs; a decision that runs the call reports to this
    /// request like a new call.
    pub(super) async fn decide_by_token(&self, tool: &ToolRef, token: &str, ctx: &RequestContext<RoleServer>) -> CallToolResponse {
        let runtime = &self.shared.runtime;
        let decision = match runtime.verify_decision(token) {
            Ok(decision) => decision,
            Err(e) => return error_result(format!("The decision was refused: {e}. Nothing ran.")),
        };
        // A token decides only for the caller whose call it names: brought by anyone else it is
        // told what a token for no waiting call is (no oracle of other callers' calls).
        if decision.binding.owner != super::identity::owner_of(ctx) {
            super::identity::refused_as_unknown("decision token");
            let unknown = RuntimeError::UnknownCall(decision.call_id().to_owned());
            return error_result(format!("The decision was refused: {unknown}. Nothing ran."));
        }
        if decision.binding.tool != tool.id {
            return error_result(format!(
                "The decision was refused: it is for a call of another tool, not `{}`. Nothing ran.",
                tool.name
            ));
        }
        let slot = match self.take_slot(ctx, &"send the decision again") {
            Ok(slot) => slot,
            Err(refused) => return error_result(refused),
        };
        match runtime.decide(decision, self.options(ctx, slot.continuation.clone())).await {
            Ok(stream) => self.drive(tool, stream, slot, ctx, 1).await,
            Err(e) => {
                slot.finish().await;
                error_result(format!("The decision was refused: {e}. Nothing ran."))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(v: Value) -> JsonObject {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn keys_are_read_and_checked() {
        let m = meta(json!({IDEMPOTENCY_KEY_META: "order-42", DECISION_META: "tsd1.a.b"}));
        let read = CallMeta::read([&m]).unwrap();
        assert_eq!(read.idempotency_key.as_deref(), Some("order-42"));
        assert_eq!(read.decision.as_deref(), Some("tsd1.a.b"));
        let empty = meta(json!({}));
        assert_eq!(CallMeta::read([&empty, &m]).unwrap(), read, "the first that has a key");
        assert_eq!(CallMeta::read([&empty]).unwrap(), CallMeta::default());
        let long = "k".repeat(MAX_IDEMPOTENCY_KEY + 1);
        for bad in [json!(""), json!(42), json!(long), json!("line\nbreak"), json!("clé")] {
            let m = meta(json!({ IDEMPOTENCY_KEY_META: bad }));
            let e = CallMeta::read([&m]).unwrap_err();
            assert!(e.message.contains("printable ASCII"), "{}", e.message);
        }
        let m = meta(json!({ DECISION_META: {"approve": true} }));
        assert!(CallMeta::read([&m]).unwrap_err().message.contains("tsd1."));
        assert_eq!(scoped_key("k", None), "k");
        let (a, ab) = (crate::Caller::new("a", [""; 0]), crate::Caller::new("a:b", [""; 0]));
        assert_ne!(scoped_key("b:k", Some(&a)), scoped_key("k", Some(&ab)));
        let holder = crate::Caller::static_token();
        let keys = [scoped_key("k", None), scoped_key("k", Some(&a)), scoped_key("k", Some(&holder))];
        assert!(keys[0] != keys[1] && keys[1] != keys[2] && keys[0] != keys[2], "{keys:?}");
        let bearer_named = crate::Caller::new("bearer-token", [""; 0]);
        assert_ne!(scoped_key("k", Some(&bearer_named)), scoped_key("k", Some(&holder)));
    }
}
