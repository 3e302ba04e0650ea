// `idempotent` reaches the spec (a policy for a run that was interrupted), distinct from MCP's
// `idempotentHint`; under a runtime a second run of the same call answers with the first's
// result, and the body sees one key per call.
use std::sync::atomic::{AtomicUsize, Ordering};

use tool_core::prelude::*;
use tool_core::runtime::{Outcome, Runtime};
use tool_core::spec::Idempotent;

static SENT: AtomicUsize = AtomicUsize::new(0);

/// Send an email once per call
#[tool(idempotent)]
pub async fn send_email(to: String, #[ctx] cx: ToolContext) -> String {
    SENT.fetch_add(1, Ordering::SeqCst);
    format!("sent to {to} under {}", cx.idempotency_key().as_str().len())
}

/// Charge a card, looking the charge up after an interruption
#[tool(idempotent = "recover", mcp(idempotent_hint = false))]
pub async fn charge(cents: u32) -> u32 {
    cents
}

pub fn main() {
    assert_eq!(send_email::tool().unwrap().spec().policy.idempotent, Some(Idempotent::Fail));
    let charge = charge::tool().unwrap();
    assert_eq!(charge.spec().policy.idempotent, Some(Idempotent::Recover));
    assert_eq!(charge.spec().presentation.mcp.idempotent_hint, Some(false), "the MCP hint is its own");
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let runtime = Runtime::new(Registry::from_iter([send_email::tool()]));
        let mut seen = Vec::new();
        for id in ["call_a", "call_a", "call_b"] {
            let options = CallOptions::default().id(id);
            let run = runtime.call("send-email", json!({"to": "ada@example.com"}), options).finish().await;
            let Outcome::Done(output) = run.outcome else { panic!("{:?}", run.outcome) };
            seen.push(output.value());
        }
        assert_eq!(seen[0], seen[1], "the same call answers with its recorded result");
        assert_eq!(SENT.load(Ordering::SeqCst), 2, "one run per call");
    });
}
