//! Prompts, resources (with subscriptions) and completion, which `#[tool]` does not cover: an
//! `rmcp` handler written directly.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CompleteRequestParams, CompleteResult, CompletionInfo, ContentBlock, GetPromptRequestParams, GetPromptResponse, GetPromptResult,
    Implementation, InputRequests, InputRequiredResult, InputResponses, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, PaginatedRequestParams, Prompt, PromptArgument, PromptMessage, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Reference, Resource, ResourceContents, ResourceTemplate, Role, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, UnsubscribeRequestParams,
};
use rmcp::service::{RequestContext as McpRequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler};
use tool_core::prelude::*;

use super::diagnostics::form_request;
use super::{PNG, bounded};

/// Prompts, resources (with subscriptions) and completion for the suite, written on `rmcp`.
#[derive(Debug, Clone, Default)]
pub struct FixtureExtras {
    subscriptions: Arc<Mutex<HashSet<String>>>,
}

fn argument(name: &str, description: &str) -> PromptArgument {
    PromptArgument::new(name).with_description(description).with_required(true)
}

/// `test://template/{id}/data` → `id`.
fn template_id(uri: &str) -> Option<&str> {
    uri.strip_prefix("test://template/")?
        .strip_suffix("/data")
        .filter(|id| !id.is_empty() && !id.contains('/'))
}

/// `test_input_required_result_prompt`: asks for the user's context (`user_context`) until the
/// client brings it back, then answers the prompt with it. Nothing is kept between the rounds.
fn context_prompt(responses: Option<&InputResponses>) -> GetPromptResponse {
    let context = responses
        .and_then(|r| r.get("user_context"))
        .filter(|answer| answer["action"] == "accept")
        .map(|answer| answer["content"]["context"].as_str().map_or("-", bounded).to_owned());
    match context {
        Some(context) => GetPromptResult::new(vec![PromptMessage::new_text(
            Role::User,
            format!("Answer in this context: {context}"),
        )])
        .into(),
        None => {
            let Ok(request) = serde_json::from_value(form_request("What context should the prompt use?", "context", "string")) else {
                return GetPromptResult::new(vec![]).into();
            };
            GetPromptResponse::InputRequired(InputRequiredResult::new(
                Some(InputRequests::from([("user_context".to_owned(), request)])),
                None,
            ))
        }
    }
}

impl ServerHandler for FixtureExtras {
    fn get_info(&self) -> ServerConfig {
        let caps = ServerCapabilities::builder()
            .enable_completions()
            .enable_prompts()
            .enable_resources()
            .enable_resources_subscribe()
            .build();
        ServerConfig::new(caps).with_server_info(Implementation::new("mcp_fixture", env!("CARGO_PKG_VERSION")))
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: McpRequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(vec![
            Prompt::new("test_simple_prompt", Some("A simple prompt without arguments"), None),
            Prompt::new(
                "test_prompt_with_arguments",
                Some("A prompt with two required arguments"),
                Some(vec![
                    argument("arg1", "First test argument"),
                    argument("arg2", "Second test argument"),
                ]),
            ),
            Prompt::new(
                "test_prompt_with_embedded_resource",
                Some("A prompt with an embedded resource"),
                Some(vec![argument("resourceUri", "URI of the resource to embed")]),
            ),
            Prompt::new("test_prompt_with_image", Some("A prompt with an image"), None),
            Prompt::new(
                "test_input_required_result_prompt",
                Some("A prompt that asks the user for its context first (an input-required result)"),
                None,
            ),
        ]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _ctx: McpRequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name == "test_input_required_result_prompt" {
            return Ok(context_prompt(request.input_responses.as_ref()));
        }
        let args = request.arguments.unwrap_or_default();
        let arg = |name: &str| -> Result<String, ErrorData> {
            args.get(name)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| ErrorData::invalid_params(format!("the prompt `{}` needs the argument `{name}`", request.name), None))
        };
        let messages = match request.name.as_str() {
            "test_simple_prompt" => vec![PromptMessage::new_text(Role::User, "This is a simple prompt for testing.")],
            "test_prompt_with_arguments" => vec![PromptMessage::new_text(
                Role::User,
                format!("Prompt with arguments: arg1='{}', arg2='{}'", arg("arg1")?, arg("arg2")?),
            )],
            "test_prompt_with_embedded_resource" => vec![
                PromptMessage::new(
                    Role::User,
                    ContentBlock::resource(
                        ResourceContents::text("Embedded resource content for testing.", arg("resourceUri")?).with_mime_type("text/plain"),
                    ),
                ),
                PromptMessage::new_text(Role::User, "Please process the embedded resource above."),
            ],
            "test_prompt_with_image" => vec![
                PromptMessage::new(Role::User, ContentBlock::image(PNG, "image/png")),
                PromptMessage::new_text(Role::User, "Please analyze the image above."),
            ],
            other => return Err(ErrorData::invalid_params(format!("there is no prompt `{other}`"), None)),
        };
        Ok(GetPromptResult::new(messages).into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: McpRequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(vec![
            Resource::new("test://static-text", "static-text")
                .with_description("A static text resource")
                .with_mime_type("text/plain"),
            Resource::new("test://static-binary", "static-binary")
                .with_description("A static binary resource (a PNG image)")
                .with_mime_type("image/png"),
            Resource::new("test://watched-resource", "watched-resource")
                .with_description("A resource clients can subscribe to")
                .with_mime_type("text/plain"),
        ]))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: McpRequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(vec![
            ResourceTemplate::new("test://template/{id}/data", "template-data")
                .with_description("Data for an id")
                .with_mime_type("application/json"),
        ]))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _ctx: McpRequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.as_str();
        let contents = match uri {
            "test://static-text" => {
                ResourceContents::text("This is the content of the static text resource.", uri).with_mime_type("text/plain")
            }
            "test://static-binary" => ResourceContents::blob(PNG, uri).with_mime_type("image/png"),
            "test://watched-resource" => ResourceContents::text("This resource can be watched.", uri).with_mime_type("text/plain"),
            _ => match template_id(uri) {
                Some(id) => {
                    let data = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
                    ResourceContents::text(data.to_string(), uri).with_mime_type("application/json")
                }
                None => {
                    return Err(ErrorData::resource_not_found(
                        format!("there is no resource `{uri}`"),
                        Some(json!({"uri": uri})),
                    ));
                }
            },
        };
        Ok(ReadResourceResult::new(vec![contents]).into())
    }

    async fn subscribe(&self, request: SubscribeRequestParams, _ctx: McpRequestContext<RoleServer>) -> Result<(), ErrorData> {
        self.subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(request.uri.to_string());
        Ok(())
    }

    async fn unsubscribe(&self, request: UnsubscribeRequestParams, _ctx: McpRequestContext<RoleServer>) -> Result<(), ErrorData> {
        self.subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(request.uri.as_str());
        Ok(())
    }

    async fn complete(&self, request: CompleteRequestParams, _ctx: McpRequestContext<RoleServer>) -> Result<CompleteResult, ErrorData> {
        let candidates: &[&str] = match (&request.r#ref, request.argument.name.as_str()) {
            (Reference::Prompt(p), "arg1") if p.name == "test_prompt_with_arguments" => &["testValue1", "test-value", "other"],
            (Reference::Prompt(p), "arg2") if p.name == "test_prompt_with_arguments" => &["testValue2", "other"],
            (Reference::Resource(r), "id") if r.uri == "test://template/{id}/data" => &["123", "456", "789"],
            _ => &[],
        };
        let typed = request.argument.value.as_str();
        let values = candidates
            .iter()
            .filter(|c| c.starts_with(typed))
            .map(|c| (*c).to_owned())
            .collect();
        let info = CompletionInfo::with_all_values(values).map_err(|e| ErrorData::internal_error(e, None))?;
        Ok(CompleteResult::new(info))
    }
}
