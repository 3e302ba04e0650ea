//! The adapter from a [`TypedTool`] to the object-safe [`Tool`]: decoding the validated input
//! and context into the tool's types, running its body, and turning its typed output (or a
//! result the application submitted) into a [`ToolOutput`] with `on_output`, `to_model_output`
//! and the output views; its typed hooks, transforms and approval predicate behind the
//! object-safe calls, and the [`Hints`] its types allow. Validation, limits and panic
//! handling around a call are `call`'s.

use std::marker::PhantomData;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::output::OutputTree;
use super::{
    BoxFuture, Decoded, Hints, InputHook, Payload, RUNS_ITS_OWN_BODY, Shortcuts, Tool, ToolInput, ToolOutput, TypedTool, decode_error,
};
use crate::Caller;
use crate::context::{RequestContext, ToolCallInfo, ToolContext};
use crate::error::{ErrorKind, Issue, ToolError};
use crate::spec::{ApprovalRule, ToolSpec, TransformPhase, TransformTarget};

/// Adapter from a [`TypedTool`] to the object-safe [`Tool`].
pub(super) struct FnTool<T> {
    pub(super) spec: ToolSpec,
    /// Whether `#[tool]` vouched for `T::Input` and the input schema is the one derived from
    /// it (not an override): only then does it answer `decodes`.
    pub(super) derived: bool,
    /// Whether `#[tool]` vouched for `T::Output` and the output schema is the one derived
    /// from it: then it answers `encodes_plain`.
    pub(super) encodes_plain: bool,
    pub(super) _tool: PhantomData<fn() -> T>,
}

/// The context as `C` when `C` is the untyped [`RequestContext`] (a copy of the map).
fn as_context<C: 'static>(context: &Map<String, Value>) -> Option<C> {
    if std::any::TypeId::of::<C>() != std::any::TypeId::of::<RequestContext>() {
        return None;
    }
    let mut untyped = Some(RequestContext(context.clone()));
    (&mut untyped as &mut dyn std::any::Any).downcast_mut::<Option<C>>()?.take()
}

/// The request context as `C`: the map itself for the untyped [`RequestContext`] (no
/// decoding through a `Value`), decoded otherwise. Generic over the context type only, so the
/// tools sharing one compile it once.
fn typed_context<C: DeserializeOwned + 'static>(context: &Map<String, Value>) -> Result<C, ToolError> {
    match as_context::<C>(context) {
        Some(untyped) => Ok(untyped),
        None => serde_json::from_value::<C>(Value::Object(context.clone()))
            .map_err(|e| decode_error(ErrorKind::InvalidContext, "the request context", e)),
    }
}

/// A call that failed before its body ran.
fn failed(e: ToolError) -> BoxFuture<'static, Result<ToolOutput, ToolError>> {
    Box::pin(std::future::ready(Err(e)))
}

/// What turns a run's output into the call's [`ToolOutput`].
struct AfterRun {
    /// The steps, with the tree when the registry will check an output its type does not
    /// vouch for.
    steps: OutputSteps,
    /// The call `on_output` receives, when the tool has the hook.
    on_output: Option<ToolCallInfo>,
}

/// What a run needs besides its input: the typed context, and what comes after the run.
fn prepare<C: DeserializeOwned + 'static, S, R>(
    spec: &ToolSpec,
    encodes_plain: bool,
    context: Arc<Map<String, Value>>,
    call: ToolCallInfo,
) -> Result<(ToolContext<C, S, R>, AfterRun), ToolError> {
    let typed = typed_context::<C>(&context)?;
    let steps = OutputSteps {
        tree: spec.schemas.output.is_some() && !encodes_plain,
        ..OutputSteps::of(spec)
    };
    let on_output = spec.behaviour.hooks.on_output.then(|| call.clone());
    Ok((ToolContext::new(typed, context, call), AfterRun { steps, on_output }))
}

/// Which steps turn a typed tool's output into a [`ToolOutput`] (from its spec).
#[derive(Debug, Clone, Copy)]
struct OutputSteps {
    model_output: bool,
    display: bool,
    transcript: bool,
    /// Whether to build the output's tree for the registry's output check (a body's output
    /// the check will validate: one with a schema its type does not vouch for).
    tree: bool,
}

impl OutputSteps {
    fn of(spec: &ToolSpec) -> Self {
        OutputSteps {
            tree: false,
            model_output: spec.behaviour.has_model_output,
            display: spec.has_transform(TransformTarget::Display, TransformPhase::Output),
            transcript: spec.has_transform(TransformTarget::Transcript, TransformPhase::Output),
        }
    }
}

/// A typed output as the call's [`ToolOutput`], whether the body produced it or the
/// application submitted it: `on_output` (when `call` is given), the JSON, `to_model_output`
/// and the output views. Only what needs `T` is here (compiled once per tool); the rest is in
/// functions that are not generic.
fn finish<T: TypedTool>(steps: OutputSteps, output: &T::Output, on_output: Option<&ToolCallInfo>) -> Result<ToolOutput, ToolError> {
    // (The `T::HAS_*` tests come first: a tool without the part compiles none of its code.)
    if T::HAS_ON_OUTPUT
        && let Some(call) = on_output
    {
        on_output_ran(call, crate::panic::guarded(|| T::on_output(call, output)));
    }
    let mut finished = encoded(output, steps.tree)?;
    if T::HAS_MODEL_OUTPUT && steps.model_output && finished.json.get() != "null" {
        finished.set_model_output(T::to_model_output(output));
    }
    if T::HAS_TRANSFORM {
        finished.set_display(steps.display.then(|| output_view::<T>(output, TransformTarget::Display)).flatten());
        finished.set_transcript(
            steps
                .transcript
                .then(|| output_view::<T>(output, TransformTarget::Transcript))
                .flatten(),
        );
    }
    Ok(finished)
}

/// An output's JSON, and its tree when `tree` (for the registry's output check). Generic over
/// the output type only, so the tools returning one type compile it once.
fn encoded<O: serde::Serialize>(output: &O, tree: bool) -> Result<ToolOutput, ToolError> {
    let mut finished = serialised(serde_json::value::to_raw_value(output))?;
    if tree {
        finished.tree = OutputTree(crate::json::to_tree(output));
    }
    Ok(finished)
}

/// The run of a typed tool's body, in a module of its own: the code that holds a tool's future
/// is compiled apart from the rest of the tools' code (an edit of one tool's body then
/// recompiles only this code of every tool's, not all of `FnTool`'s).
mod run {
    use std::future::Future;
    use std::marker::PhantomData;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use super::{AfterRun, BoxFuture, ToolError, ToolOutput, TypedTool, finish};

    /// The future of one run: the body's, then its output finished.
    pub(super) fn boxed<T: TypedTool>(
        run: impl Future<Output = Result<T::Output, ToolError>> + Send + 'static,
        after: AfterRun,
    ) -> BoxFuture<'static, Result<ToolOutput, ToolError>> {
        Box::pin(Finishing::<T, _> {
            run,
            after,
            _tool: PhantomData,
        })
    }

    pin_project_lite::pin_project! {
        /// The body's future, its output finished when it is ready: a plain future, smaller
        /// than the coroutine of an `async` block around it.
        struct Finishing<T, F> {
            #[pin]
            run: F,
            after: AfterRun,
            _tool: PhantomData<fn() -> T>,
        }
    }

    impl<T: TypedTool, F: Future<Output = Result<T::Output, ToolError>>> Future for Finishing<T, F> {
        type Output = Result<ToolOutput, ToolError>;

        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
            let this = self.project();
            match this.run.poll(cx) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
                Poll::Ready(Ok(output)) => Poll::Ready(finish::<T>(this.after.steps, &output, this.after.on_output.as_ref())),
            }
        }
    }
}

/// Logs an `on_output` hook's failure (it does not fail the call).
fn on_output_ran(call: &ToolCallInfo, ran: Result<(), ToolError>) {
    if let Err(e) = ran {
        tracing::warn!(tool = %call.tool_name, error = %e, "on_output hook failed");
    }
}

/// The output of a typed output serialised as `json`; an error if it could not be.
fn serialised(json: Result<Box<RawValue>, serde_json::Error>) -> Result<ToolOutput, ToolError> {
    json.map(ToolOutput::from_json)
        .map_err(|e| ToolError::with_kind(ErrorKind::InvalidOutput, format!("the output could not be serialised: {e}")))
}

/// A result the application submitted for tool `id` that it could not read (`e` says why).
fn unreadable_result(id: &str, e: &ToolError) -> ToolError {
    let message = crate::json::bound_quotes(e.message());
    ToolError::invalid(
        ErrorKind::InvalidOutput,
        format!("The result for tool `{id}` could not be read: {message}"),
        vec![Issue {
            path: String::new(),
            message,
        }],
    )
    .for_tool(id)
}

/// The error of a result submitted for a tool that runs its own body (`result` is dropped).
fn takes_no_result(spec: &ToolSpec, result: Value) -> ToolError {
    drop(result);
    unreadable_result(&spec.id, &ToolError::new(RUNS_ITS_OWN_BODY))
}

/// The error of a transform that returned `None` for a payload it is configured for.
fn yielded_nothing() -> ToolError {
    ToolError::new("the transform yielded nothing")
}

/// An output transform, run on the typed output; a panic or an empty result is an `Err`.
fn output_view<T: TypedTool>(output: &T::Output, target: TransformTarget) -> Option<Result<Value, ToolError>> {
    Some(crate::panic::guarded(|| {
        T::transform(target, TransformPhase::Output, Payload::Output(output)).unwrap_or_else(|| Err(yielded_nothing()))
    }))
}

impl<T: TypedTool> Tool for FnTool<T> {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn execute(
        &self,
        input: ToolInput<'_>,
        context: Arc<Map<String, Value>>,
        call: ToolCallInfo,
    ) -> BoxFuture<'static, Result<ToolOutput, ToolError>> {
        // Decoding the input and running the body need `T`; the rest does not (the context
        // needs only the context and payload types, which tools share).
        let input = match input.take::<T::Input>() {
            Ok(input) => input,
            Err(e) => return failed(decode_error(ErrorKind::InvalidInput, "the input", e)),
        };
        let (cx, after) = match prepare(&self.spec, self.encodes_plain, context, call) {
            Ok(prepared) => prepared,
            Err(e) => return failed(e),
        };
        run::boxed::<T>(T::execute(input, cx), after)
    }

    fn shortcuts(&self) -> Option<Shortcuts<'_>> {
        Some(Shortcuts::of(self))
    }

    fn complete(&self, result: Value, call: &ToolCallInfo) -> Result<ToolOutput, ToolError> {
        if !T::HAS_RESULT {
            return Err(takes_no_result(&self.spec, result));
        }
        let id = self.spec.id.as_str();
        let output = crate::panic::guarded(|| T::read_result(result)).map_err(|e| unreadable_result(id, &e))?;
        let on_output = self.spec.behaviour.hooks.on_output.then_some(call);
        finish::<T>(OutputSteps::of(&self.spec), &output, on_output)
    }

    fn requires_approval(&self, input: ToolInput<'_>, context: &Map<String, Value>, caller: Option<&Caller>) -> bool {
        match self.spec.policy.require_approval {
            ApprovalRule::Never => false,
            ApprovalRule::Always => true,
            // Fail closed: a predicate the tool does not have decides nothing.
            ApprovalRule::Predicate if !T::HAS_APPROVAL => true,
            ApprovalRule::Predicate => {
                let typed = input.decode::<T::Input>().ok().and_then(|i| {
                    let c = serde_json::from_value::<T::Context>(Value::Object(context.clone())).ok()?;
                    Some((i, c))
                });
                // Fail closed: anything but a clean `false` means approval is required.
                let decided = typed.map(|(i, c)| crate::panic::guarded(|| T::approval(&i, &c, caller)));
                !matches!(decided, Some(Ok(false)))
            }
        }
    }

    fn transform(&self, target: TransformTarget, phase: TransformPhase, payload: &Value) -> Option<Result<Value, ToolError>> {
        if !T::HAS_TRANSFORM || !self.spec.has_transform(target, phase) {
            return None;
        }
        let unreadable =
            |e: serde_json::Error| ToolError::with_kind(ErrorKind::InvalidInput, format!("the payload could not be read: {e}"));
        let run = || -> Result<Value, ToolError> {
            let out = match phase {
                TransformPhase::Input | TransformPhase::Approval => {
                    let i = T::Input::deserialize(payload).map_err(unreadable)?;
                    let p = if phase == TransformPhase::Input {
                        Payload::Input(&i)
                    } else {
                        Payload::Approval(&i)
                    };
                    T::transform(target, phase, p)
                }
                TransformPhase::InputDelta => T::transform(target, phase, Payload::InputDelta(payload.as_str().unwrap_or_default())),
                TransformPhase::Error => {
                    let e = ToolError::deserialize(payload).map_err(unreadable)?;
                    T::transform(target, phase, Payload::Error(&e))
                }
                TransformPhase::Resume => {
                    let r = T::Resume::deserialize(payload).map_err(unreadable)?;
                    T::transform(target, phase, Payload::Resume(&r))
                }
                TransformPhase::Suspend => {
                    let s = T::Suspend::deserialize(payload).map_err(unreadable)?;
                    T::transform(target, phase, Payload::Suspend(&s))
                }
                TransformPhase::Output => return Err(ToolError::new("the output transform runs on the typed value inside execute")),
            };
            out.unwrap_or_else(|| Err(yielded_nothing()))
        };
        Some(crate::panic::guarded(run))
    }

    fn input_hook(&self, event: InputHook<'_>, call: &ToolCallInfo) -> Result<(), ToolError> {
        if !T::HAS_INPUT_HOOKS {
            return Ok(());
        }
        crate::panic::guarded(|| match event {
            InputHook::Start => T::on_input_start(call),
            InputHook::Delta(d) => T::on_input_delta(call, d),
            InputHook::Available(v) => {
                let input = T::Input::deserialize(v).map_err(|e| decode_error(ErrorKind::InvalidInput, "the input", e))?;
                T::on_input_available(call, &input)
            }
        })
    }
}

impl<T: TypedTool> Hints for FnTool<T> {
    fn call_seen_through_context(&self) -> bool {
        // `on_output` receives a copy of the call: the key must be in it.
        !self.spec.behaviour.hooks.on_output
    }

    fn encodes_plain(&self) -> bool {
        self.encodes_plain
    }

    fn decode_input(&self, text: &str) -> Option<Option<Decoded>> {
        if !self.derived {
            return None;
        }
        Some(decode_caught(decode_text::<T::Input>, text))
    }

    fn vouches_for_input(&self) -> bool {
        self.derived
    }

    fn value_decodes(&self, value: &Value) -> Option<Option<(String, Decoded)>> {
        if !self.derived {
            return None;
        }
        let Ok(text) = super::input::value_text(value) else {
            return Some(None);
        };
        Some(decode_caught(decode_text::<T::Input>, &text).map(|decoded| (text, decoded)))
    }
}

// The hints' decoding: only the decoding itself is compiled once per input type; the panic
// catching around it is compiled once for every tool (it takes the decoder as a fn pointer).

/// `text` decoded into `I`, kept for the first run; `None` when it does not decode.
fn decode_text<I: DeserializeOwned + Send + 'static>(text: &str) -> Option<Decoded> {
    serde_json::from_str::<I>(text).ok().map(Decoded::new)
}

/// `decode(text)`; a `Deserialize` that panics is caught where the body runs, here it means
/// "validate" (`None`).
fn decode_caught(decode: fn(&str) -> Option<Decoded>, text: &str) -> Option<Decoded> {
    crate::panic::catch_panic(|| decode(text)).ok().flatten()
}
