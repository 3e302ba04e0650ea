//! A tool under an edited spec: another id, a longer description, more scopes.
//!
//! Owns [`with_spec`]: the registry, catalogs and MCP see the edited spec, while running,
//! approval, transforms and hooks stay the inner tool's. Used by the provider fan-out (renamed
//! connection tools, selection scopes) and `serve --tool-scope`. It does not decide what to
//! edit.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::ToolError;
use crate::context::ToolCallInfo;
use crate::spec::{ToolSpec, TransformPhase, TransformTarget};
use crate::tool::{BoxFuture, InputHook, Tool, ToolInput, ToolOutput};

/// `inner` under an edited spec (another id, description or scopes); everything else (running,
/// approval, transforms, hooks) is the inner tool's.
///
/// ```
/// use tool_core::{tool::with_spec, DynamicTool, Tool};
/// let tool = DynamicTool::builder("lookup", "Look a record up")
///     .handler(|_, _| async { Ok(serde_json::json!(1)) })
///     .unwrap()
///     .into_tool();
/// let scoped = with_spec(tool, |spec| spec.policy.scopes.push("crm.read".into()));
/// assert_eq!(scoped.spec().policy.scopes, ["crm.read"]);
/// ```
pub fn with_spec(inner: Arc<dyn Tool>, edit: impl FnOnce(&mut ToolSpec)) -> Arc<dyn Tool> {
    let mut spec = inner.spec().clone();
    edit(&mut spec);
    Arc::new(Respecified { inner, spec })
}

/// A tool under an edited spec ([`with_spec`]).
struct Respecified {
    inner: Arc<dyn Tool>,
    spec: ToolSpec,
}

impl Tool for Respecified {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn execute(
        &self,
        input: ToolInput<'_>,
        context: Arc<Map<String, Value>>,
        call: ToolCallInfo,
    ) -> BoxFuture<'static, Result<ToolOutput, ToolError>> {
        self.inner.execute(input, context, call)
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
