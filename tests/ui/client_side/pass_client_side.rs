// A tool without a body: a definition only, whose calls the application answers. Its hooks,
// approval and `to_model_output` work as for any tool; `async` is allowed and changes nothing.
use tool_core::prelude::*;
use tool_core::runtime::{ResumeOptions, Outcome, Runtime};

/// Where to show the map.
#[derive(Serialize, Deserialize, JsonSchema)]
pub struct MapInput {
    /// The place.
    pub place: String,
}

/// What the browser showed.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
pub struct MapShown {
    /// Whether it is on screen.
    pub shown: bool,
}

fn describe(out: &MapShown) -> ModelOutput {
    ModelOutput::Text(format!("shown: {}", out.shown))
}

fn started(_call: &ToolCallInfo) {}

/// Shows a map in the user's browser
#[tool(to_model_output = describe, on_input_start = started, mcp(read_only_hint = true))]
pub fn show_map(input: MapInput) -> MapShown;

/// Tells the user something (nothing comes back but an acknowledgement)
#[tool(id = "notify-user", require_approval)]
pub async fn notify(
    /// The text
    text: String,
);

pub fn main() {
    let tool = show_map::tool().unwrap();
    assert!(tool.spec().behaviour.client_side);
    assert!(notify::tool().unwrap().spec().behaviour.client_side);
    assert!(tool.spec().schemas.output.is_some());
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let runtime = Runtime::new(Registry::from_module(module_path!()).unwrap());
        let run = runtime.call("show-map", json!({"place": "Rome"}), CallOptions::default()).finish().await;
        let Outcome::AwaitingResult(waiting) = run.outcome else { panic!("{:?}", run.outcome) };
        let run = runtime.submit_result(waiting.id(), json!({"shown": true})).await.unwrap().finish().await;
        let Outcome::Done(out) = run.outcome else { panic!("{:?}", run.outcome) };
        assert_eq!(out.for_model(), ModelOutput::Text("shown: true".into()));

        let run = runtime.call("notify-user", json!({"text": "hi"}), CallOptions::default()).finish().await;
        let Outcome::AwaitingApproval(waiting) = run.outcome else { panic!("{:?}", run.outcome) };
        let run = runtime.approve(waiting.id(), ResumeOptions::default()).await.unwrap().finish().await;
        let Outcome::AwaitingResult(waiting) = run.outcome else { panic!("{:?}", run.outcome) };
        let run = runtime.submit_result(waiting.id(), json!(null)).await.unwrap().finish().await;
        assert!(matches!(run.outcome, Outcome::Done(_)), "{:?}", run.outcome);
    });
}
