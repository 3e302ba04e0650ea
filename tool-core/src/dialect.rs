//! Which model provider a value is written for: one [`Dialect`] per way of writing tools that
//! really differs, and what each can do.
//!
//! Owns [`Dialect`], its names and its capabilities as methods: strict mode, the tool-name
//! rule, whether tool results are written and streamed responses read. Each capability is
//! carried out where it belongs, by one exhaustive `match` on the dialect: the schema passes in
//! [`catalog::pass`](crate::catalog::pass), the entry layouts in [`catalog`](crate::catalog),
//! the tool-result shapes here ([`ModelOutput::to_tool_result`]), the stream decoders in
//! [`stream`](crate::stream). A new provider is a new variant, and the compiler lists every place
//! it needs an answer.
//!
//! Must not import `runtime`, `mcp` or `cli`: the edges map their own spellings onto a dialect
//! (the command line's `--format openai`, say), never the other way round.

pub(crate) mod mcp_block;
mod result;

use std::fmt;

use crate::catalog::names::NameRule;
#[cfg(doc)]
use crate::model_output::ModelOutput;

/// A model provider's way of writing tool definitions, tool results and streamed tool calls.
///
/// Gemini has two: its tool declarations take the input schema either as `parameters` (an
/// OpenAPI 3.0 subset, rewritten) or as `parametersJsonSchema` (JSON Schema, as it is). MCP is a
/// dialect too: its `tools/list` entries and `tools/call` results.
///
/// It serialises as its [name](Dialect::as_str), e.g. `"openai-chat"`.
///
/// ```
/// use tool_core::Dialect;
///
/// assert_eq!(Dialect::GeminiOpenApi.as_str(), "gemini-openapi");
/// assert!(Dialect::OpenAiResponses.supports_strict());
/// assert!(!Dialect::GeminiJsonSchema.supports_strict());
/// // OpenAI forbids dots in tool names, MCP does not.
/// assert!(!Dialect::OpenAiChat.name_rule().accepts("github.create_issue"));
/// assert!(Dialect::Mcp.name_rule().accepts("github.create_issue"));
/// assert!(Dialect::Anthropic.supports_streaming() && !Dialect::Mcp.supports_streaming());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub enum Dialect {
    /// OpenAI Chat Completions: `tools[].function`, `{role: "tool"}` result messages, streamed
    /// `choices[].delta.tool_calls`.
    #[serde(rename = "openai-chat")]
    OpenAiChat,
    /// OpenAI Responses: `tools[]` of `type: "function"`, `function_call_output` result items,
    /// streamed `response.function_call_arguments.*` events.
    #[serde(rename = "openai-responses")]
    OpenAiResponses,
    /// Anthropic Messages: `tools[].input_schema`, `tool_result` blocks, streamed
    /// `content_block_*` events.
    #[serde(rename = "anthropic")]
    Anthropic,
    /// Gemini `functionDeclarations[].parameters` (OpenAPI 3.0 subset).
    #[serde(rename = "gemini-openapi")]
    GeminiOpenApi,
    /// Gemini `functionDeclarations[].parametersJsonSchema` (JSON Schema).
    #[serde(rename = "gemini-json-schema")]
    GeminiJsonSchema,
    /// MCP: `tools/list` entries (`inputSchema` / `outputSchema`) and `tools/call` results.
    #[serde(rename = "mcp")]
    Mcp,
}

impl Dialect {
    /// Every dialect, in declaration order.
    pub const ALL: [Dialect; 6] = [
        Dialect::OpenAiChat,
        Dialect::OpenAiResponses,
        Dialect::Anthropic,
        Dialect::GeminiOpenApi,
        Dialect::GeminiJsonSchema,
        Dialect::Mcp,
    ];

    /// The kebab-case name (as serialised, and in schema-pass messages).
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::OpenAiChat => "openai-chat",
            Dialect::OpenAiResponses => "openai-responses",
            Dialect::Anthropic => "anthropic",
            Dialect::GeminiOpenApi => "gemini-openapi",
            Dialect::GeminiJsonSchema => "gemini-json-schema",
            Dialect::Mcp => "mcp",
        }
    }

    /// Whether a tool can be declared strict (the provider then guarantees arguments matching
    /// the schema): OpenAI Chat and Responses, Anthropic.
    pub fn supports_strict(self) -> bool {
        match self {
            Dialect::OpenAiChat | Dialect::OpenAiResponses | Dialect::Anthropic => true,
            Dialect::GeminiOpenApi | Dialect::GeminiJsonSchema | Dialect::Mcp => false,
        }
    }

    /// The rule a tool name must follow; a catalog maps the ids it breaks to names it accepts.
    pub fn name_rule(self) -> NameRule {
        match self {
            Dialect::OpenAiChat | Dialect::OpenAiResponses | Dialect::Anthropic => NameRule::PLAIN,
            Dialect::GeminiOpenApi | Dialect::GeminiJsonSchema => NameRule::GEMINI,
            Dialect::Mcp => NameRule::MCP,
        }
    }

    /// Whether [`ModelOutput::to_tool_result`] writes this dialect's tool results (all but
    /// Gemini's, whose `functionResponse` needs the function's name: every dialect's,
    /// Gemini's included, are written by [`ModelOutput::to_tool_result_named`]).
    pub fn supports_tool_results(self) -> bool {
        result::Shape::of(self).is_some()
    }

    /// Whether a [`StreamDecoder`](crate::stream::StreamDecoder) reads this dialect's streamed
    /// responses: OpenAI Chat and Responses, Anthropic.
    pub fn supports_streaming(self) -> bool {
        crate::stream::decodes(self)
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dialects_have_kebab_names_matching_serde() {
        for d in Dialect::ALL {
            assert_eq!(serde_json::to_value(d).unwrap(), json!(d.as_str()));
            assert_eq!(serde_json::from_value::<Dialect>(json!(d.as_str())).unwrap(), d);
            assert_eq!(d.to_string(), d.as_str());
        }
        assert_eq!(Dialect::GeminiJsonSchema.as_str(), "gemini-json-schema");
    }

    #[test]
    fn capabilities() {
        let strict: Vec<Dialect> = Dialect::ALL.into_iter().filter(|d| d.supports_strict()).collect();
        assert_eq!(strict, [Dialect::OpenAiChat, Dialect::OpenAiResponses, Dialect::Anthropic]);
        let streams: Vec<Dialect> = Dialect::ALL.into_iter().filter(|d| d.supports_streaming()).collect();
        assert_eq!(streams, [Dialect::OpenAiChat, Dialect::OpenAiResponses, Dialect::Anthropic]);
        let results: Vec<Dialect> = Dialect::ALL.into_iter().filter(|d| d.supports_tool_results()).collect();
        assert_eq!(
            results,
            [Dialect::OpenAiChat, Dialect::OpenAiResponses, Dialect::Anthropic, Dialect::Mcp]
        );
    }
}
