//! The seed's single-hook snippets (the "Available hooks" section of the `createTool()`
//! reference), one tool each, translated one to one.
//!
//! In the seed all four are `id: 'example-tool'` with the description "Example tool with
//! hooks"; ids are unique in a registry, so each is named for its hook. The first three have
//! no `execute` in the seed: they are client-side tools (`#[tool] fn ...;`), whose calls the
//! application answers. The `onOutput` snippet has one (`return { result: 'Success' }`).
//!
//! | tool | seed snippet | hook receives |
//! |---|---|---|
//! | `example-input-start` | `onInputStart` | `toolCallId`, `messages`, `abortSignal` |
//! | `example-input-delta` | `onInputDelta` | `inputTextDelta`, `toolCallId`, `messages`, `abortSignal` |
//! | `example-input-available` | `onInputAvailable` (input `{ location }`) | `input`, `toolCallId`, `messages`, `abortSignal` |
//! | `example-output` | `onOutput` (output `{ result }`) | `output`, `toolCallId`, `toolName`, `abortSignal` |
//!
//! Each hook logs what the seed's `console.log` prints through `tracing` (target
//! `examples::seed_hooks`), with what it received as fields: `tool_call_id`, `messages` (the
//! conversation as JSON), `input_text_delta`, `input`, `output`, `tool_name`, `aborted` (the
//! abort signal). `examples/tests/it/tools/seed_hooks.rs` drives them with a real provider stream.

use tool_core::prelude::*;

/// The conversation as JSON text, for a log field.
fn json_text<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// Example tool with hooks
#[tool(id = "example-input-start", on_input_start = input_started)]
pub fn example_input_start();

/// The seed's ``onInputStart: ({ toolCallId, messages, abortSignal }) => console.log(`Tool
/// ${toolCallId} input streaming started`)``.
pub fn input_started(call: &ToolCallInfo) {
    tracing::info!(
        tool_call_id = %call.tool_call_id,
        messages = %json_text(&call.data.messages),
        aborted = call.cancellation.is_cancelled(),
        "Tool {} input streaming started",
        call.tool_call_id
    );
}

/// Example tool with hooks
#[tool(id = "example-input-delta", on_input_delta = received_chunk)]
pub fn example_input_delta();

/// The seed's ``onInputDelta: ({ inputTextDelta, toolCallId, messages, abortSignal }) =>
/// console.log(`Received input chunk: ${inputTextDelta}`)``.
pub fn received_chunk(call: &ToolCallInfo, input_text_delta: &str) {
    tracing::info!(
        tool_call_id = %call.tool_call_id,
        messages = %json_text(&call.data.messages),
        aborted = call.cancellation.is_cancelled(),
        input_text_delta,
        "Received input chunk: {input_text_delta}"
    );
}

/// Example tool with hooks
#[tool(id = "example-input-available", on_input_available = received_input)]
pub fn example_input_available(location: String);

/// The seed's ``onInputAvailable: ({ input, toolCallId, messages, abortSignal }) =>
/// console.log(`Tool received complete input:`, input)``: the input is typed
/// (`InputOf<example_input_available>`).
pub fn received_input(call: &ToolCallInfo, input: &InputOf<example_input_available>) {
    let input = json_text(input);
    tracing::info!(
        tool_call_id = %call.tool_call_id,
        messages = %json_text(&call.data.messages),
        aborted = call.cancellation.is_cancelled(),
        input = %input,
        "Tool received complete input: {input}"
    );
}

/// The `onOutput` snippet's output schema: `z.object({ result: z.string() })`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ExampleOutput {
    /// What the tool reports.
    pub result: String,
}

/// Example tool with hooks
#[tool(id = "example-output", on_output = execution_completed)]
pub async fn example_output() -> ExampleOutput {
    ExampleOutput { result: "Success".into() }
}

/// The seed's ``onOutput: ({ output, toolCallId, toolName, abortSignal }) =>
/// console.log(`${toolName} execution completed:`, output)``: the output is typed
/// (`ExampleOutput`).
pub fn execution_completed(call: &ToolCallInfo, output: &ExampleOutput) {
    let output = json_text(output);
    tracing::info!(
        tool_call_id = %call.tool_call_id,
        tool_name = %call.tool_name,
        aborted = call.cancellation.is_cancelled(),
        output = %output,
        "{} execution completed: {output}",
        call.tool_name
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_follow_the_snippets() {
        let start = example_input_start::tool().unwrap();
        assert!(start.spec().behaviour.client_side && start.spec().behaviour.hooks.on_input_start);
        assert_eq!(start.spec().description, "Example tool with hooks");
        let delta = example_input_delta::tool().unwrap();
        assert!(delta.spec().behaviour.client_side && delta.spec().behaviour.hooks.on_input_delta);
        let available = example_input_available::tool().unwrap();
        assert!(available.spec().behaviour.client_side && available.spec().behaviour.hooks.on_input_available);
        assert_eq!(available.spec().schemas.input["required"], json!(["location"]));
        let output = example_output::tool().unwrap();
        assert!(!output.spec().behaviour.client_side && output.spec().behaviour.hooks.on_output);
        assert_eq!(output.spec().schemas.output.as_ref().unwrap()["required"], json!(["result"]));
    }
}
