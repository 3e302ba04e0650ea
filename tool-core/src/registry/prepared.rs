//! A call between its preparation and its end: [`Prepared`] (the tool, its validated
//! arguments, request context, execution policy and budget), the approval gate, and the run in
//! synchronous steps around one await ([`Prepared::start`], [`Prepared::finish`]) that
//! [`Registry::call`](super::Registry::call) and the runtime share.

use std::sync::Arc;

use serde_json::Value;

use super::Entry;
use crate::budget::OutputBudget;
use crate::call::{self, Finished, Validated};
use crate::context::{CallData, CallEnv};
use crate::error::{ErrorKind, ToolError};
use crate::isolate::{ExecutionPolicy, Placement};
use crate::spec::ApprovalRule;
#[cfg(feature = "runtime")]
use crate::tool::Tool;
use crate::tool::ToolOutput;

/// A validated call, not yet run: what [`Registry::prepare`](super::Registry::prepare) gives every entry point.
pub(crate) struct Prepared<'a> {
    /// The tool and its compiled schemas.
    pub(super) entry: Entry,
    /// The validated (and repaired) arguments.
    pub(super) input: Validated<'a>,
    /// The validated request context, shared (every run of the call hands it to the tool as is).
    pub(crate) context: Arc<serde_json::Map<String, Value>>,
    /// Where its body runs (the registry's policy when it was prepared).
    pub(super) policy: Arc<ExecutionPolicy>,
    /// What bounds the model's view of its output (the tool's, or the registry's default).
    pub(super) budget: Option<OutputBudget>,
}

/// A prepared call that owns its arguments (the runtime keeps it across awaits and waits).
#[cfg(feature = "runtime")]
pub(crate) type OwnedPrepared = Prepared<'static>;

/// A prepared call about to own its arguments ([`Prepared::into_owning`]): it still lacks them
/// when they were valid as given (`given`), to be moved in rather than copied.
#[cfg(feature = "runtime")]
pub(crate) struct Owning {
    prepared: OwnedPrepared,
    given: bool,
}

#[cfg(feature = "runtime")]
impl Owning {
    /// The prepared call owning its arguments: `args` (the arguments it was prepared from)
    /// moved in when they were valid as given, else the arguments it already owns.
    pub(crate) fn with(self, args: crate::call::CallArgs<'static>) -> OwnedPrepared {
        let Owning { mut prepared, given } = self;
        if given {
            prepared.input = Validated::Value(match args {
                crate::call::CallArgs::Value(v) => v,
                crate::call::CallArgs::Text(t) => crate::json::parse_unique(t.as_bytes()).unwrap_or(Value::Null),
            });
        }
        prepared
    }
}

#[cfg(feature = "runtime")]
impl Clone for OwnedPrepared {
    fn clone(&self) -> Self {
        Prepared {
            entry: self.entry.clone(),
            input: Validated::Value(self.args().into_owned()),
            context: self.context.clone(),
            policy: self.policy.clone(),
            budget: self.budget.clone(),
        }
    }
}

impl<'a> Prepared<'a> {
    #[cfg(feature = "runtime")]
    pub(crate) fn tool(&self) -> &Arc<dyn Tool> {
        &self.entry.tool
    }

    /// The validated arguments as a value.
    #[cfg(feature = "runtime")]
    pub(crate) fn args(&self) -> std::borrow::Cow<'_, Value> {
        match &self.input {
            Validated::Given(v, ..) => std::borrow::Cow::Borrowed(*v),
            Validated::Value(v) => std::borrow::Cow::Borrowed(v),
            Validated::Text(t) | Validated::Decoded(t, _) => std::borrow::Cow::Owned(serde_json::from_str(t).unwrap_or(Value::Null)),
        }
    }

    /// The same call owning its arguments (text valid as sent is decoded once, a value valid
    /// as given is copied).
    #[cfg(feature = "runtime")]
    pub(crate) fn into_owned(mut self) -> Result<OwnedPrepared, ToolError> {
        if let Validated::Given(v, ..) = self.input {
            self.input = Validated::Value(v.clone());
        }
        self.into_owning().map(|owning| owning.prepared)
    }

    /// [`Prepared::into_owned`] without copying a value valid as given: the caller moves it in
    /// ([`Owning::with`]) once this borrow of it has ended.
    #[cfg(feature = "runtime")]
    pub(crate) fn into_owning(self) -> Result<Owning, ToolError> {
        let (input, given) = match self.input {
            Validated::Given(..) => (Value::Null, true),
            Validated::Value(v) => (v, false),
            Validated::Text(_) | Validated::Decoded(..) => {
                let id = self.entry.tool.spec().id.as_str();
                let input = self
                    .input
                    .as_input()
                    .decode::<Value>()
                    .map_err(|e| ToolError::with_kind(ErrorKind::InvalidInput, format!("Tool `{id}`: {e}")).for_tool(id))?;
                (input, false)
            }
        };
        let prepared = Prepared {
            entry: self.entry,
            input: Validated::Value(input),
            context: self.context,
            policy: self.policy,
            budget: self.budget,
        };
        Ok(Owning { prepared, given })
    }

    /// Whether the tool's own rule asks for approval of this call by `caller` (fails closed).
    pub(crate) fn needs_approval(&self, caller: Option<&crate::Caller>) -> bool {
        self.entry.tool.spec().policy.require_approval != ApprovalRule::Never
            && self.entry.tool.requires_approval(self.input.as_input(), &self.context, caller)
    }

    /// The approval gate of a call nobody can approve: a tool that needs approval is refused.
    pub(crate) fn gate(&self, caller: Option<&crate::Caller>) -> Result<(), ToolError> {
        if !self.needs_approval(caller) {
            return Ok(());
        }
        let id = self.entry.tool.spec().id.as_str();
        // Fail closed: approving a call is the runtime's job, bound to its call id; a plain
        // call of a tool that needs approval never runs it.
        Err(ToolError::with_kind(
            ErrorKind::ApprovalRequired,
            format!("Tool `{id}` requires approval before it runs; it was not run. Ask the user to approve this call."),
        )
        .for_tool(id))
    }

    /// Checks resume data against the tool's `resume` schema.
    #[cfg(feature = "runtime")]
    pub(crate) fn check_resume(&self, data: &Value) -> Result<(), ToolError> {
        call::validate_resume(&self.entry.tool.spec().id, &self.entry.compiled, data)
    }

    /// Checks a result the application submitted for a client-side call against the tool's
    /// output schema (the same model-readable error as a tool's own output).
    #[cfg(feature = "runtime")]
    pub(crate) fn check_result(&self, result: &Value) -> Result<(), ToolError> {
        let id = self.entry.tool.spec().id.as_str();
        let json = serde_json::value::to_raw_value(result)
            .map_err(|e| ToolError::with_kind(ErrorKind::InvalidOutput, format!("the result could not be read: {e}")).for_tool(id))?;
        call::validate_output(id, &self.entry.compiled, &json, crate::json::to_tree(result).as_ref())
    }

    /// The output of a call whose result was recorded by an earlier run (a receipt), as that
    /// run produced it; the budget applies as it would have. The body does not run.
    #[cfg(feature = "runtime")]
    pub(crate) fn recorded(&self, data: &CallData, output: ToolOutput) -> Finished {
        let call_id = data.tool_call_id.clone().unwrap_or_else(call::new_call_id);
        Finished::Output(match &self.budget {
            Some(budget) => output.with_budget(budget.clone(), call_id),
            None => output,
        })
    }

    /// Runs it (approval already settled): execution, then the suspension or output checks. A
    /// client-side tool is not run: its result comes from the application (the runtime).
    #[cfg(any(feature = "runtime", feature = "check"))]
    pub(crate) async fn run(&self, data: &Arc<CallData>, env: CallEnv, resume: Option<Value>) -> Result<Finished, ToolError> {
        let call_id = data.tool_call_id.clone().unwrap_or_else(call::new_call_id);
        let (running, call_id) = self.start(call_id, data, env, resume)?;
        let ran = call::executed(call::trace::execution_span(), running).await;
        self.finish(ran, call_id)
    }

    /// The synchronous start of [`Prepared::run`] as call `call_id`: the body, created, to be
    /// awaited and handed to [`Prepared::finish`] with the call id returned beside it (kept
    /// only when a budget will name it).
    pub(crate) fn start(
        &self,
        call_id: String,
        data: &Arc<CallData>,
        env: CallEnv,
        resume: Option<Value>,
    ) -> Result<(call::Running<'_>, Option<String>), ToolError> {
        let spec = self.entry.tool.spec();
        if spec.behaviour.client_side {
            return Err(crate::tool::client_side_error(&spec.id));
        }
        let kept = self.budget.as_ref().map(|_| call_id.clone());
        let running = call::start(
            (&self.entry.tool, &self.entry.name),
            self.input.as_input(),
            self.context.clone(),
            (call_id, data),
            env,
            resume,
            &self.policy,
        )?;
        Ok((running, kept))
    }

    /// The end of [`Prepared::run`]: what the body gave, checked against the output (or
    /// suspend) schema, the budget applied.
    pub(crate) fn finish(
        &self,
        ran: std::thread::Result<Result<ToolOutput, ToolError>>,
        call_id: Option<String>,
    ) -> Result<Finished, ToolError> {
        let id = self.entry.tool.spec().id.as_str();
        let mut finished = call::finish(id, ran)?;
        call::trace::output_span().in_scope(|| match &mut finished {
            // Valid by construction, when it was serialised here from a vouched type (a child
            // process's answer crossed a pipe: it is checked as it arrived).
            Finished::Output(_)
                if self.entry.compiled.output_implied() && self.policy.placement(self.entry.tool.spec()) != Placement::Process =>
            {
                Ok(())
            }
            Finished::Output(output) => {
                let tree = output.tree.0.take();
                call::validate_output(id, &self.entry.compiled, &output.json, tree.as_ref())
            }
            Finished::Suspended(s) => call::validate_suspension(id, &self.entry.compiled, &s.payload),
        })?;
        Ok(match (finished, &self.budget, call_id) {
            (Finished::Output(output), Some(budget), Some(call_id)) => Finished::Output(output.with_budget(budget.clone(), call_id)),
            (finished, ..) => finished,
        })
    }
}
