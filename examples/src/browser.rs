//! A client-side tool: the seed's definition-only tool (`createTool()` without `execute`),
//! whose calls the application answers. Here a browser asks its user to confirm an action.
//!
//! | tool | what it shows |
//! |---|---|
//! | `ask-confirmation` | `#[tool] fn ...;` without a body: the call waits (`Outcome::AwaitingResult`) until the application submits the user's answer (`Runtime::submit_result`, `toolsmith call ID --result 'JSON'`); the answer is checked against `Confirmation`'s schema, then `on_output` and `to_model_output` run as for any result |
//!
//! ```
//! use tool_core::prelude::*;
//! use tool_core::runtime::{Outcome, Runtime};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let runtime = Runtime::new(Registry::from_iter([examples::browser::ask_confirmation::tool()]));
//! let args = json!({"question": "Delete the draft?", "confirmLabel": "Delete"});
//! let run = runtime.call("ask-confirmation", args, CallOptions::default()).finish().await;
//! let Outcome::AwaitingResult(waiting) = run.outcome else { panic!() };
//! // ... the browser shows the dialog; the user clicks "Delete" ...
//! let answer = json!({"confirmed": true, "answeredAt": "2026-12-01T15:00:00Z"});
//! let run = runtime.submit_result(waiting.id(), answer).await.unwrap().finish().await;
//! let Outcome::Done(output) = run.outcome else { panic!() };
//! assert_eq!(output.for_model(), ModelOutput::Text("The user confirmed.".into()));
//! # });
//! ```

use tool_core::prelude::*;

/// What the browser asks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfirmationRequest {
    /// The question the dialog shows, e.g. "Delete the draft?".
    pub question: String,
    /// The label of the button that confirms, e.g. "Delete".
    pub confirm_label: String,
}

/// The user's answer, as the browser reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Confirmation {
    /// Whether the user confirmed.
    pub confirmed: bool,
    /// When the user answered (RFC 3339).
    pub answered_at: String,
}

/// Ask the user to confirm an action in their browser
///
/// The browser shows the question with a confirm button and reports whether the user
/// confirmed. Nothing on the server answers this tool: the application does.
#[tool(
    tags = ["browser"],
    to_model_output = answer_for_model,
    on_output = log_answer,
    mcp(read_only_hint = true),
)]
pub fn ask_confirmation(request: ConfirmationRequest) -> Confirmation;

/// What the model is told of the answer.
pub fn answer_for_model(answer: &Confirmation) -> ModelOutput {
    ModelOutput::Text(if answer.confirmed {
        "The user confirmed.".into()
    } else {
        "The user declined.".into()
    })
}

/// `on_output` of `ask-confirmation`: runs on the result the application submitted.
pub fn log_answer(call: &ToolCallInfo, answer: &Confirmation) {
    tracing::info!(
        tool_call_id = %call.tool_call_id,
        confirmed = answer.confirmed,
        "Tool {} call {} answered: confirmed = {}",
        call.tool_name,
        call.tool_call_id,
        answer.confirmed
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use tool_core::runtime::{Outcome, Runtime, RuntimeError};

    fn runtime() -> Runtime {
        Runtime::new(Registry::from_iter([ask_confirmation::tool()]))
    }

    #[test]
    fn it_is_client_side_with_camel_case_schemas() {
        let tool = ask_confirmation::tool().unwrap();
        let spec = tool.spec();
        assert!(spec.behaviour.client_side);
        assert_eq!(spec.schemas.input["required"], json!(["question", "confirmLabel"]));
        let output = spec.schemas.output.as_ref().unwrap();
        assert_eq!(output["required"], json!(["confirmed", "answeredAt"]));
    }

    #[tokio::test]
    async fn the_browser_answers_once_with_a_checked_value() {
        let runtime = runtime();
        let args = json!({"question": "Publish?", "confirmLabel": "Publish"});
        let run = runtime
            .call("ask-confirmation", args.clone(), CallOptions::default())
            .finish()
            .await;
        let Outcome::AwaitingResult(waiting) = run.outcome else {
            panic!("{:?}", run.outcome)
        };
        assert_eq!(waiting.call.args, args);
        let wrong = runtime.submit_result(waiting.id(), json!({"confirmed": false})).await;
        let Some(RuntimeError::InvalidResult(error)) = wrong.err() else {
            panic!("a result without answeredAt is refused")
        };
        assert!(error.message().contains("answeredAt"), "{}", error.message());
        let answer = json!({"confirmed": false, "answeredAt": "2026-12-01T15:00:00Z"});
        let run = runtime.submit_result(waiting.id(), answer.clone()).await.unwrap().finish().await;
        let Outcome::Done(output) = run.outcome else {
            panic!("{:?}", run.outcome)
        };
        assert_eq!(output.value(), answer);
        assert_eq!(output.for_model(), ModelOutput::Text("The user declined.".into()));
        assert!(runtime.submit_result(waiting.id(), answer).await.is_err(), "answered once");
    }

    #[tokio::test]
    async fn a_plain_call_says_the_application_answers_it() {
        let registry = Registry::from_iter([ask_confirmation::tool()]);
        let args = json!({"question": "Publish?", "confirmLabel": "Publish"});
        let error = registry.call("ask-confirmation", args, CallOptions::default()).await.unwrap_err();
        assert!(error.message().contains("answered by the application"), "{}", error.message());
    }
}
