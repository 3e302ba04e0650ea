//! Recording a tool's lifecycle: which hooks ran, in which order, with what.
//!
//! Owns [`Hook`], [`HookCall`], [`HookLog`] and the recording wrapper that stands between the
//! registry and a tool: it passes every call through unchanged and writes down
//! `on_input_start`, `on_input_delta`, `on_input_available` (with what each hook returned) when the
//! tool declares them, the start of the body, and `on_output` (run inside the tool's
//! `execute`: recorded when the tool declares it and the body succeeded; its failure is not
//! returned to the wrapper, only logged as the warning "on_output hook failed", which the
//! kit's log capture holds). Nothing here decides when a hook runs: the runtime does.

use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::ToolSpec;
use crate::context::{BoxFuture, ToolCallInfo};
use crate::error::ToolError;
use crate::registry::Registry;
use crate::spec::{TransformPhase, TransformTarget};
use crate::tool::{InputHook, Tool, ToolInput, ToolOutput};

/// A step of a call's lifecycle.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "hook", rename_all = "snake_case")]
pub enum Hook {
    /// `on_input_start`: the model started streaming the call.
    InputStart,
    /// `on_input_delta` with the text delta.
    InputDelta {
        /// The delta.
        delta: String,
    },
    /// `on_input_available` with the complete, validated input.
    InputAvailable {
        /// The input.
        input: Value,
    },
    /// Not a hook: the tool's body started (marks where it ran among the hooks).
    Execute {
        /// The validated input the body received.
        input: Value,
    },
    /// `on_output` with the output.
    Output {
        /// The output.
        output: Value,
    },
}

impl Hook {
    /// The hook's name (`on_input_start`, …, `execute` for the body).
    pub fn name(&self) -> &'static str {
        match self {
            Hook::InputStart => "on_input_start",
            Hook::InputDelta { .. } => "on_input_delta",
            Hook::InputAvailable { .. } => "on_input_available",
            Hook::Execute { .. } => "execute",
            Hook::Output { .. } => "on_output",
        }
    }
}

/// One recorded step: which call, what, and the hook's error when it failed (or panicked).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HookCall {
    /// The call's id.
    pub tool_call_id: String,
    /// The tool.
    pub tool_name: String,
    /// What ran.
    #[serde(flatten)]
    pub hook: Hook,
    /// What the hook returned when it failed or panicked (`None` for the body, for hooks that
    /// succeeded, and for `on_output`, whose failure is only logged).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ToolError>,
}

impl HookCall {
    /// `"<hook> <detail>"`: the delta, the input or the output, for compact assertions
    /// (`on_input_delta {"city": "Pa`, `execute {"city":"Paris"}`, `on_input_start`).
    pub fn line(&self) -> String {
        match &self.hook {
            Hook::InputStart => "on_input_start".to_owned(),
            Hook::InputDelta { delta } => format!("on_input_delta {delta}"),
            Hook::InputAvailable { input } => format!("on_input_available {input}"),
            Hook::Execute { input } => format!("execute {input}"),
            Hook::Output { output } => format!("on_output {output}"),
        }
    }
}

/// The steps recorded so far, shared by every wrapped tool of a test.
#[derive(Debug, Clone, Default)]
pub struct HookLog(Arc<Mutex<Vec<HookCall>>>);

impl HookLog {
    fn push(&self, call: &ToolCallInfo, hook: Hook, error: Option<ToolError>) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(HookCall {
            tool_call_id: call.tool_call_id.clone(),
            tool_name: call.tool_name.to_string(),
            hook,
            error,
        });
    }

    /// Everything recorded, in order.
    pub fn all(&self) -> Vec<HookCall> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// What was recorded for one call, in order.
    pub fn of(&self, tool_call_id: &str) -> Vec<HookCall> {
        self.all().into_iter().filter(|h| h.tool_call_id == tool_call_id).collect()
    }

    /// Wraps `tool` so that its lifecycle is recorded here.
    pub fn wrap(&self, tool: Arc<dyn Tool>) -> Arc<dyn Tool> {
        Arc::new(Recording {
            inner: tool,
            log: self.clone(),
        })
    }

    /// A registry holding every tool of `registry`, wrapped, with its limits and execution
    /// policy.
    pub fn wrap_registry(&self, registry: &Registry) -> Registry {
        copy_registry(registry, |tool| self.wrap(tool))
    }
}

/// A registry with every tool of `registry` passed through `each`, and its limits and
/// execution policy.
pub(crate) fn copy_registry(registry: &Registry, each: impl Fn(Arc<dyn Tool>) -> Arc<dyn Tool>) -> Registry {
    let copy = Registry::new().with_limits(registry.limits());
    copy.set_execution((*registry.execution()).clone());
    for tool in registry.tools() {
        // The tools came out of a registry: they insert again (ids are unique there).
        let _ = copy.insert(each(tool));
    }
    copy
}

/// A tool that records its lifecycle and otherwise is the tool it wraps.
struct Recording {
    inner: Arc<dyn Tool>,
    log: HookLog,
}

impl Tool for Recording {
    fn spec(&self) -> &ToolSpec {
        self.inner.spec()
    }

    fn execute(
        &self,
        input: ToolInput<'_>,
        context: Arc<Map<String, Value>>,
        call: ToolCallInfo,
    ) -> BoxFuture<'static, Result<ToolOutput, ToolError>> {
        let args = match &input {
            ToolInput::Value(v) => (*v).clone(),
            ToolInput::Text(t) | ToolInput::Decoded(t, _) => serde_json::from_str(t).unwrap_or_else(|_| Value::String((*t).to_owned())),
        };
        self.log.push(&call, Hook::Execute { input: args }, None);
        let on_output = self
            .inner
            .spec()
            .behaviour
            .hooks
            .on_output
            .then(|| (self.log.clone(), call.clone()));
        let run = self.inner.execute(input, context, call);
        Box::pin(async move {
            let out = run.await;
            if let (Some((log, call)), Ok(output)) = (on_output, &out) {
                log.push(&call, Hook::Output { output: output.value() }, None);
            }
            out
        })
    }

    fn requires_approval(&self, input: ToolInput<'_>, context: &Map<String, Value>, caller: Option<&crate::Caller>) -> bool {
        self.inner.requires_approval(input, context, caller)
    }

    fn transform(&self, target: TransformTarget, phase: TransformPhase, payload: &Value) -> Option<Result<Value, ToolError>> {
        self.inner.transform(target, phase, payload)
    }

    fn complete(&self, result: Value, call: &ToolCallInfo) -> Result<ToolOutput, ToolError> {
        self.inner.complete(result, call)
    }

    fn input_hook(&self, event: InputHook<'_>, call: &ToolCallInfo) -> Result<(), ToolError> {
        let result = self.inner.input_hook(event, call);
        let declared = self.inner.spec().behaviour.hooks;
        let hook = match event {
            InputHook::Start if declared.on_input_start => Hook::InputStart,
            InputHook::Delta(d) if declared.on_input_delta => Hook::InputDelta { delta: d.to_owned() },
            InputHook::Available(v) if declared.on_input_available => Hook::InputAvailable { input: v.clone() },
            // The runtime offers every event; a tool without the hook does nothing with it.
            _ => return result,
        };
        self.log.push(call, hook, result.as_ref().err().cloned());
        result
    }
}
