//! The conformance suite's fixture tools (`test_*`, `json_schema_2020_12_tool`): fixed texts,
//! images, audio and embedded resources, logging, progress, errors, sampling and elicitation
//! forms, and a JSON Schema 2020-12 input.

use std::time::Duration;

use tool_core::context::Elicitation;
use tool_core::prelude::*;

use super::{PNG, client};

/// An empty WAV file.
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEARKwAAIhYAQACABAAZGF0YQAAAAA=";

fn png() -> ContentPart {
    ContentPart::ImageData {
        data: PNG.into(),
        media_type: "image/png".into(),
    }
}

/// An MCP block passed through as is.
fn mcp_block(block: Value) -> ContentPart {
    ContentPart::Custom {
        provider_options: json!({ "mcp": block }),
    }
}

/// Returns a simple text response
#[tool(id = "test_simple_text")]
pub async fn test_simple_text() -> String {
    "This is a simple text response for testing.".into()
}

/// Returns a 1×1 PNG image
#[tool(id = "test_image_content", to_model_output = image_for_model)]
pub async fn test_image_content() -> String {
    "a 1x1 PNG image".into()
}

#[allow(clippy::ptr_arg)] // `to_model_output` takes `fn(&Output)`.
fn image_for_model(_: &String) -> ModelOutput {
    ModelOutput::content([png()])
}

/// Returns a short WAV audio clip
#[tool(id = "test_audio_content", to_model_output = audio_for_model)]
pub async fn test_audio_content() -> String {
    "an empty WAV clip".into()
}

#[allow(clippy::ptr_arg)] // `to_model_output` takes `fn(&Output)`.
fn audio_for_model(_: &String) -> ModelOutput {
    // Image data with an audio media type becomes an MCP audio block.
    ModelOutput::content([ContentPart::ImageData {
        data: WAV.into(),
        media_type: "audio/wav".into(),
    }])
}

/// Returns an embedded text resource
#[tool(id = "test_embedded_resource", to_model_output = embedded_for_model)]
pub async fn test_embedded_resource() -> String {
    "This is an embedded resource content.".into()
}

#[allow(clippy::ptr_arg)] // `to_model_output` takes `fn(&Output)`.
fn embedded_for_model(text: &String) -> ModelOutput {
    ModelOutput::content([mcp_block(json!({
        "type": "resource",
        "resource": {"uri": "test://embedded-resource", "mimeType": "text/plain", "text": text}
    }))])
}

/// Returns text, an image and an embedded resource in one result
#[tool(id = "test_multiple_content_types", to_model_output = mixed_for_model)]
pub async fn test_multiple_content_types() -> String {
    "Multiple content types test:".into()
}

#[allow(clippy::ptr_arg)] // `to_model_output` takes `fn(&Output)`.
fn mixed_for_model(text: &String) -> ModelOutput {
    ModelOutput::content([
        ContentPart::text(text.as_str()),
        png(),
        mcp_block(json!({
            "type": "resource",
            "resource": {
                "uri": "test://mixed-content-resource",
                "mimeType": "application/json",
                "text": json!({"test": "data", "value": 123}).to_string()
            }
        })),
    ])
}

/// Sends three log messages while it runs
#[tool(id = "test_tool_with_logging")]
pub async fn test_tool_with_logging(#[ctx] cx: ToolContext) -> String {
    let steps = ["Tool execution started", "Tool processing data", "Tool execution completed"];
    for (i, step) in steps.into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        cx.observe().log(LogLevel::Info, step, None);
    }
    "Logging test completed".into()
}

/// Reports progress 0, 50 and 100 of 100
#[tool(id = "test_tool_with_progress")]
pub async fn test_tool_with_progress(#[ctx] cx: ToolContext) -> String {
    for (i, step) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if let Some(mcp) = cx.mcp() {
            mcp.progress(step, Some(100.0), Some(format!("{step}% done")));
        }
    }
    "Progress test completed".into()
}

/// Always fails, to test error reporting
#[tool(id = "test_error_handling")]
pub async fn test_error_handling() -> Result<String, ToolError> {
    Err(ToolError::new("This tool intentionally returns an error for testing"))
}

/// Asks the client's model to answer a prompt (sampling)
#[tool(id = "test_sampling")]
pub async fn test_sampling(
    /// The prompt to send to the client's model
    prompt: String,
    #[ctx] cx: ToolContext,
) -> Result<String, ToolError> {
    let answer = client(&cx)?
        .sample(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
            "maxTokens": 100
        }))
        .await?;
    // `content` is one block, or a list of blocks on newer revisions.
    let blocks = match &answer["content"] {
        Value::Array(items) => items.clone(),
        one => vec![one.clone()],
    };
    let text: Vec<&str> = blocks.iter().filter_map(|b| b["text"].as_str()).collect();
    Ok(format!("LLM response: {}", text.join("\n")))
}

/// Asks the client's user for a username and an email address (elicitation)
#[tool(id = "test_elicitation")]
pub async fn test_elicitation(
    /// The message shown to the user
    message: String,
    #[ctx] cx: ToolContext,
) -> Result<String, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"}
        },
        "required": ["username", "email"]
    });
    elicit(&cx, message, schema).await
}

/// Asks the user for a form whose fields have default values (SEP-1034)
#[tool(id = "test_elicitation_sep1034_defaults")]
pub async fn test_elicitation_sep1034_defaults(#[ctx] cx: ToolContext) -> Result<String, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "description": "Verification status", "default": true}
        }
    });
    elicit(&cx, "Please review and update the form fields with defaults".into(), schema).await
}

/// Asks the user for a form with every kind of enum field (SEP-1330)
#[tool(id = "test_elicitation_sep1330_enums")]
pub async fn test_elicitation_sep1330_enums(#[ctx] cx: ToolContext) -> Result<String, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "description": "Choose an option", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "description": "Choose a titled option", "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"}
            ]},
            "legacyEnum": {"type": "string", "description": "Choose a legacy option", "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "description": "Choose options", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "description": "Choose titled options", "items": {"anyOf": [
                {"const": "value1", "title": "First Choice"},
                {"const": "value2", "title": "Second Choice"},
                {"const": "value3", "title": "Third Choice"}
            ]}}
        }
    });
    elicit(&cx, "Please select options from the enum fields".into(), schema).await
}

pub(crate) async fn elicit(cx: &ToolContext, message: String, schema: Value) -> Result<String, ToolError> {
    Ok(match client(cx)?.elicit(message, schema).await? {
        Elicitation::Accept { content } => format!("User provided the requested information: {content}"),
        Elicitation::Decline => "User declined to provide the information".into(),
        Elicitation::Cancel => "User cancelled the request".into(),
    })
}

/// A street address.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "address", extend("$anchor" = "addressDef"))]
pub struct Address {
    /// Street and number
    pub street: Option<String>,
    /// City
    pub city: Option<String>,
}

/// How to reach a person.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ContactMethod {
    /// By phone
    Phone,
    /// By email
    Email,
}

/// A name, an optional address and a way to reach the person: a phone number or an email
/// address (`allOf`/`anyOf`), the one `contactMethod` names (`if`/`then`/`else`). The JSON
/// Schema 2020-12 keywords a derive does not write are the struct's `extend`s; the MCP listing
/// keeps every one of them.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(extend(
    "allOf" = [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
    "if" = {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
    "then" = {"required": ["phone"]},
    "else" = {"required": ["email"]}
))]
pub struct PersonInput {
    /// The person's name
    pub name: Option<String>,
    /// Where the person lives
    pub address: Option<Address>,
    /// How to reach the person
    pub contact_method: Option<ContactMethod>,
    /// Phone number
    pub phone: Option<String>,
    /// Email address
    pub email: Option<String>,
}

/// Tool with JSON Schema 2020-12 features
#[tool(id = "json_schema_2020_12_tool")]
pub async fn json_schema_2020_12_tool(input: PersonInput) -> String {
    let city = input.address.and_then(|a| a.city);
    let contact = input.phone.or(input.email);
    format!(
        "name: {}, city: {}, contact: {}",
        input.name.as_deref().unwrap_or("-"),
        city.as_deref().unwrap_or("-"),
        contact.as_deref().unwrap_or("-")
    )
}

/// Answers at once (the pending suite's SSE polling scenario calls it)
///
/// The scenario lets a server close the POST stream mid-call and resume on a GET with
/// `Last-Event-ID`; a tool cannot close its stream through Toolsmith, so the result comes on the
/// POST stream, which the scenario accepts.
#[tool(id = "test_reconnection")]
pub async fn test_reconnection() -> String {
    "Reconnection test completed successfully".into()
}
