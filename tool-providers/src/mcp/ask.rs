//! A remote server's questions: the `elicitation/create` (and `sampling/createMessage`,
//! `roots/list`) requests a server sends in the middle of one of our calls, as requests of its
//! own (revisions up to 2025-11-25) or inside an input-required result (2026-07-28, SEP-2322).
//!
//! They go to whoever made the call: when the call came from an MCP client of ours that can
//! answer them (its [`McpHandle`]), they are asked there, through Toolsmith's own
//! elicitation flow ([`McpHandle::ask`]). With no one to ask, an elicitation is answered with
//! the defaults its form declares (SEP-1034) when they fill every required field, and declined
//! otherwise; `roots/list` is answered with no roots; a sampling request is refused.
//!
//! Owns the answers. Must not send requests to the server (`tools`, `session`).

use std::sync::Arc;

use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction, InputRequest, InputRequests, InputResponses};
use serde_json::{Map, Value, json};
use tool_core::ToolError;
use tool_core::context::McpHandle;

/// The MCP method of a question.
fn method(request: &InputRequest) -> &'static str {
    match request {
        InputRequest::Elicitation(_) => "elicitation/create",
        InputRequest::CreateMessage(_) => "sampling/createMessage",
        InputRequest::ListRoots(_) => "roots/list",
        _ => "unknown",
    }
}

/// Answers every question of `requests` (asked by the MCP server `server` during a call of
/// `caller`'s), by key: all at once through `caller` when it can answer each of them, else
/// each here (see the module docs).
pub(super) async fn answer_all(
    server: &str,
    caller: Option<&Arc<dyn McpHandle>>,
    requests: InputRequests,
) -> Result<InputResponses, ToolError> {
    if let Some(caller) = caller.filter(|c| requests.values().all(|r| c.supports(method(r)))) {
        let mut asked = Map::new();
        for (key, request) in &requests {
            let request = serde_json::to_value(request)
                .map_err(|e| ToolError::new(format!("The MCP server `{server}`'s question `{key}` could not be passed on: {e}")))?;
            asked.insert(key.clone(), request);
        }
        return Ok(caller.ask(asked).await?.into_iter().collect());
    }
    let mut answers = InputResponses::new();
    for (key, request) in requests {
        let answer = match &request {
            InputRequest::Elicitation(elicit) => to_value(server, &without_anyone(&elicit.params))?,
            InputRequest::ListRoots(_) => json!({"roots": []}),
            _ => {
                return Err(ToolError::new(format!(
                    "The MCP server `{server}` asked `{}` in the middle of the call; no one here can answer that.",
                    method(&request)
                )));
            }
        };
        answers.insert(key, answer);
    }
    Ok(answers)
}

/// Answers one `elicitation/create` of the server `server`, through `caller` when it can be
/// asked (see [`answer_all`]).
pub(super) async fn elicit(
    server: &str,
    caller: Option<&Arc<dyn McpHandle>>,
    params: ElicitRequestParams,
) -> Result<ElicitResult, ToolError> {
    let request = InputRequest::Elicitation(rmcp::model::ElicitRequest::new(params));
    let mut answers = answer_all(server, caller, InputRequests::from([(String::from("elicitation"), request)])).await?;
    let answer = answers
        .remove("elicitation")
        .ok_or_else(|| ToolError::new(format!("No answer to the MCP server `{server}`'s question.")))?;
    serde_json::from_value(answer).map_err(|e| {
        ToolError::new(format!(
            "The answer to the MCP server `{server}`'s question is not an elicitation result: {e}"
        ))
    })
}

fn to_value(server: &str, result: &ElicitResult) -> Result<Value, ToolError> {
    serde_json::to_value(result).map_err(|e| ToolError::new(format!("The answer to the MCP server `{server}` could not be written: {e}")))
}

/// The answer to an elicitation when there is no one to ask: the form's declared defaults
/// when they fill every required field (at least one), else a decline. A URL elicitation
/// (someone would have to open it) is declined.
pub(super) fn without_anyone(params: &ElicitRequestParams) -> ElicitResult {
    let schema = serde_json::to_value(params)
        .ok()
        .filter(|p| p.get("mode").and_then(Value::as_str) != Some("url"))
        .and_then(|p| p.get("requestedSchema").cloned());
    let content = schema.as_ref().and_then(defaults);
    let mut result = ElicitResult::new(match content {
        Some(_) => ElicitationAction::Accept,
        None => ElicitationAction::Decline,
    });
    result.content = content.map(Value::Object);
    result
}

/// The defaults a flat form schema declares (`properties.*.default`), when there is at least
/// one and every `required` field has one.
pub(super) fn defaults(schema: &Value) -> Option<Map<String, Value>> {
    let properties = schema.get("properties")?.as_object()?;
    let content: Map<String, Value> = properties
        .iter()
        .filter_map(|(name, property)| Some((name.clone(), property.get("default")?.clone())))
        .collect();
    let required = schema
        .get("required")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let filled = required.iter().all(|r| r.as_str().is_some_and(|r| content.contains_key(r)));
    (filled && !content.is_empty()).then_some(content)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(schema: Value) -> ElicitRequestParams {
        serde_json::from_value(json!({"mode": "form", "message": "Who?", "requestedSchema": schema})).unwrap()
    }

    #[test]
    fn the_declared_defaults_answer_when_they_fill_the_required_fields() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "Ada"},
            "age": {"type": "integer", "default": 36},
            "note": {"type": "string"}
        }, "required": ["name"]});
        let answer = without_anyone(&form(schema));
        assert_eq!(answer.action, ElicitationAction::Accept);
        assert_eq!(answer.content, Some(json!({"name": "Ada", "age": 36})));
    }

    #[test]
    fn a_required_field_without_a_default_or_no_default_at_all_is_declined() {
        let missing = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "Ada"}, "email": {"type": "string"}
        }, "required": ["email"]});
        let none = json!({"type": "object", "properties": {"confirmed": {"type": "boolean"}}});
        for schema in [missing, none] {
            let answer = without_anyone(&form(schema));
            assert_eq!(answer.action, ElicitationAction::Decline);
            assert_eq!(answer.content, None);
        }
    }

    #[tokio::test]
    async fn roots_are_empty_and_sampling_is_refused_without_anyone_to_ask() {
        let roots: InputRequest = serde_json::from_value(json!({"method": "roots/list"})).unwrap();
        let answers = answer_all("remote", None, InputRequests::from([("r".to_owned(), roots)]))
            .await
            .unwrap();
        assert_eq!(answers["r"], json!({"roots": []}));
        let sample: InputRequest =
            serde_json::from_value(json!({"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}})).unwrap();
        let refused = answer_all("remote", None, InputRequests::from([("s".to_owned(), sample)]))
            .await
            .unwrap_err();
        assert!(refused.message().contains("sampling/createMessage"), "{}", refused.message());
    }
}
