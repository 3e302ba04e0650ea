//! What every database row of a waiting call is checked against before use, whatever the
//! backend: its state is one toolsmith writes, its JSON reads as a call, and its columns agree
//! with the call they store. The messages never quote the stored text (it may hold
//! credentials). The integrity tag is `integrity`'s.

use crate::runtime::pending::PendingCall;
use crate::runtime::state::{CallState, StoredCall};

/// Whether a row's state is `running` (`false`: `waiting`); any other state is damage.
pub(crate) fn running(state: Option<&str>) -> Result<bool, String> {
    match state {
        Some("waiting") => Ok(false),
        Some("running") => Ok(true),
        Some(other) if other.len() <= 32 && other.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') => {
            Err(format!("its state `{other}` is not one toolsmith writes"))
        }
        _ => Err("its state is unreadable".into()),
    }
}

/// The call a row stores, checked against the row's own id, tool and kind columns.
pub(crate) fn call(json: Option<&str>, id: &str, tool_name: Option<&str>, kind: Option<&str>) -> Result<PendingCall, String> {
    let json = json.ok_or("its call is not text")?;
    let call: PendingCall = serde_json::from_str(json).map_err(|e| {
        let (kind, line, column) = (e.classify(), e.line(), e.column());
        format!("its call has unreadable JSON ({kind:?} error at {line}:{column})")
    })?;
    if call.tool_call_id != id || tool_name != Some(call.tool_name.as_str()) || kind != Some(call.kind.as_str()) {
        return Err("its columns disagree with the call they store".into());
    }
    Ok(call)
}

/// The message of a row whose tag does not match.
pub(crate) const TAG_MISMATCH: &str = "its integrity tag does not match: it was changed outside toolsmith (or the store key changed)";

/// A row as `entries` lists it: its call and state when its checks passed, else damaged (and
/// logged), with why.
pub(crate) fn listed(checked: Result<(PendingCall, CallState), String>, tool_call_id: String, tool_name: Option<String>) -> StoredCall {
    match checked {
        Ok((call, state)) => StoredCall::Call {
            call: Box::new(call),
            state,
        },
        Err(reason) => {
            tracing::warn!(%tool_call_id, %reason, "skipping a damaged pending call");
            StoredCall::Damaged {
                tool_call_id,
                tool_name,
                reason,
            }
        }
    }
}
