//! Pinned remote tools: every call of an imported tool first checks its pin.
//!
//! Owns the wrapper a provider puts around each tool it imports ([`pinned`]); the pins
//! themselves, their stores and the review API are the parent module's.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::{PinStore, check};
use crate::context::ToolCallInfo;
use crate::error::ToolError;
use crate::spec::{ToolSpec, TransformPhase, TransformTarget};
use crate::tool::{BoxFuture, InputHook, Tool, ToolInput, ToolOutput};

/// A remote tool whose every call first checks its pin.
struct PinnedTool {
    inner: Arc<dyn Tool>,
    provider: String,
    connection: String,
    store: Arc<dyn PinStore>,
}

/// `tool`, called only while its definition is the one pinned for `provider` and `connection`.
pub fn pinned(tool: Arc<dyn Tool>, provider: &str, connection: &str, store: Arc<dyn PinStore>) -> Arc<dyn Tool> {
    Arc::new(PinnedTool {
        inner: tool,
        provider: provider.to_owned(),
        connection: connection.to_owned(),
        store,
    })
}

impl Tool for PinnedTool {
    fn spec(&self) -> &ToolSpec {
        self.inner.spec()
    }

    fn execute(
        &self,
        input: ToolInput<'_>,
        context: Arc<Map<String, Value>>,
        call: ToolCallInfo,
    ) -> BoxFuture<'static, Result<ToolOutput, ToolError>> {
        // The input borrows the caller's text: start the inner call now, run it only if the pin holds.
        let run = self.inner.execute(input, context, call);
        let (inner, store) = (self.inner.clone(), self.store.clone());
        let (provider, connection) = (self.provider.clone(), self.connection.clone());
        Box::pin(async move {
            check(&*store, &provider, &connection, inner.spec()).await?;
            run.await
        })
    }

    fn requires_approval(&self, input: ToolInput<'_>, context: &Map<String, Value>, caller: Option<&crate::Caller>) -> bool {
        self.inner.requires_approval(input, context, caller)
    }

    fn transform(&self, target: TransformTarget, phase: TransformPhase, payload: &Value) -> Option<Result<Value, ToolError>> {
        self.inner.transform(target, phase, payload)
    }

    fn input_hook(&self, event: InputHook<'_>, call: &ToolCallInfo) -> Result<(), ToolError> {
        self.inner.input_hook(event, call)
    }

    fn complete(&self, result: Value, call: &ToolCallInfo) -> Result<ToolOutput, ToolError> {
        self.inner.complete(result, call)
    }
}
