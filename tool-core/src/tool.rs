//! The tool abstraction: one object-safe trait for every tool, and the typed trait the
//! `#[tool]` macro implements.
//!
//! Owns [`Tool`] (what the registry stores: `#[tool]` functions, hand-written tools and
//! [`DynamicTool`]s defined at run time all look the same), [`TypedTool`] (typed input, output,
//! context, suspend and resume types, plus the typed hook/transform/model-output functions
//! the attribute names); `typed` owns the adapter between them, `dynamic` owns
//! [`DynamicTool`], `output` what a call produced ([`ToolOutput`]). A tool without a body
//! (client-side) is one whose spec says so: its result comes from the application through
//! [`Tool::complete`]. Validation, limits and panic handling are `call`'s;
//! this module only turns validated JSON into typed values and back.

mod dynamic;
mod input;
mod output;
mod typed;

use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::Caller;
use crate::context::{RequestContext, ToolCallInfo, ToolContext};
use crate::error::{ErrorKind, Issue, ToolError};
use crate::model_output::ModelOutput;
use crate::schema::{self, SchemaError};
use crate::spec::{ApprovalRule, Behaviour, Policy, Presentation, Schemas, SourceLocation, ToolSpec, TransformPhase, TransformTarget};

pub use crate::context::boxed::BoxFuture;
pub use dynamic::{DynamicTool, DynamicToolBuilder};
pub use input::{Decoded, ToolInput};
pub use output::{OutputBound, ToolOutput};
use typed::FnTool;

/// The error of a client-side tool asked to run: nothing in this process can produce its
/// result (a plain [`Registry::call`](crate::Registry::call), `toolsmith check`, a child process).
pub(crate) fn client_side_error(id: &str) -> ToolError {
    ToolError::new(format!(
        "Tool `{id}` has no body: its calls are answered by the application, so it was not run. Call it through a runtime, where the call waits for its result (`Runtime::submit_result`, `{cmd} call CALL_ID --result 'JSON'`).",
        cmd = crate::error::operator(),
    ))
    .for_tool(id)
}

/// Any tool the registry can hold. Object-safe.
///
/// `execute` receives input and request context that the registry has already validated
/// against the spec's schemas.
pub trait Tool: std::any::Any + Send + Sync {
    /// The tool's spec.
    fn spec(&self) -> &ToolSpec;

    /// Runs the tool on validated input.
    fn execute(
        &self,
        input: ToolInput<'_>,
        context: Arc<Map<String, Value>>,
        call: ToolCallInfo,
    ) -> BoxFuture<'static, Result<ToolOutput, ToolError>>;

    /// Whether this call needs approval: the spec's rule, with a predicate deciding for
    /// [`ApprovalRule::Predicate`] (over the input, the request context and the call's
    /// authenticated caller). A predicate that fails means approval is required.
    fn requires_approval(&self, input: ToolInput<'_>, context: &Map<String, Value>, caller: Option<&Caller>) -> bool {
        let _ = (input, context, caller);
        self.spec().policy.require_approval != ApprovalRule::Never
    }

    /// Runs a value-level transform for a target and phase over a payload (input, input delta,
    /// error, approval, suspend, resume; output transforms run inside `execute` on the typed
    /// value and arrive in [`ToolOutput`]). `None` when none is configured.
    fn transform(&self, target: TransformTarget, phase: TransformPhase, payload: &Value) -> Option<Result<Value, ToolError>> {
        let _ = (target, phase, payload);
        None
    }

    /// What a registry may skip for this very object (see [`Shortcuts`]). Not part of the
    /// contract a tool or a wrapper writes: `#[tool]` and [`DynamicTool`] answer it, and an
    /// answer forwarded from another object is ignored.
    #[doc(hidden)]
    fn shortcuts(&self) -> Option<Shortcuts<'_>> {
        None
    }

    /// Runs a lifecycle hook before execution. Hook failures are returned, never raised.
    fn input_hook(&self, event: InputHook<'_>, call: &ToolCallInfo) -> Result<(), ToolError> {
        let _ = (event, call);
        Ok(())
    }

    /// Turns the result the application submitted for a client-side call (already checked
    /// against the output schema) into the call's output, as a run would have: `on_output`,
    /// `to_model_output` and the output transforms. The default keeps the value as it is.
    fn complete(&self, result: Value, call: &ToolCallInfo) -> Result<ToolOutput, ToolError> {
        let _ = call;
        Ok(ToolOutput::new(result))
    }
}

/// The optimisation hints of a tool, apart from its object-safe contract: what lets a registry
/// skip work a tool's types already did. Implemented by `#[tool]`'s typed tools and
/// [`DynamicTool`]; a registry reads them through [`Tool::shortcuts`] only when they come
/// from the very object it holds (so a wrapper, which is another object, never passes on
/// hints that may not hold for it: it changes the spec, or shows the call to a hook).
#[doc(hidden)]
pub trait Hints: Send + Sync {
    /// `Some(Some(_))` when argument text decodes into the tool's own input type (the value
    /// its first run takes, so arguments are decoded once), `Some(None)` when it does not,
    /// `None` when the tool does not vouch for its input (its input type decodes exactly what
    /// its derived schema accepts, and the input schema is that derived one: `ToolMeta::plain_input`).
    /// A registry asks only when it decided, from the schema's keywords, that the type
    /// enforces everything the schema says; then a call whose text decodes (and repeats no
    /// key) is not validated again.
    fn decode_input(&self, text: &str) -> Option<Option<Decoded>> {
        let _ = text;
        None
    }

    /// Whether the tool vouches for its input: [`decode_input`](Hints::decode_input) answers
    /// `Some` for every text. What a registry asks as a tool enters it; the default decodes
    /// `{}` to find out, a tool that knows answers without decoding anything.
    fn vouches_for_input(&self) -> bool {
        self.decode_input("{}").is_some()
    }

    /// [`decode_input`](Hints::decode_input) for arguments given as a value (what an MCP
    /// request carries): `Some(Some((text, decoded)))` when `value`, written as text, decodes
    /// into the tool's own input type (the text for later runs, the value for the first),
    /// `Some(None)` when it does not, `None` when the tool does not vouch for its input.
    /// Inputs are decoded from text only (see [`ToolInput::decode`]).
    fn value_decodes(&self, value: &Value) -> Option<Option<(String, Decoded)>> {
        let _ = value;
        None
    }

    /// Whether every output `execute` produces is valid against the output schema by
    /// construction: the output type encodes only what its derived schema accepts and the
    /// output schema is that derived one (`ToolMeta::plain_output`). A registry skips checking
    /// what the body returned only when the schema's keywords also say nothing more.
    fn encodes_plain(&self) -> bool {
        false
    }

    /// Whether `execute` shows the [`ToolCallInfo`] it receives to nothing but the
    /// [`ToolContext`] it builds (no hook, no code of the user's given it directly): then the
    /// call's derived idempotency key is made only if the body reads it.
    fn call_seen_through_context(&self) -> bool {
        false
    }
}

/// A tool's [`Hints`], tied to the object that gave them.
#[doc(hidden)]
#[derive(Clone, Copy)]
pub struct Shortcuts<'a> {
    owner: std::any::TypeId,
    spec: *const ToolSpec,
    hints: &'a dyn Hints,
}

impl<'a> Shortcuts<'a> {
    /// The hints of `tool` itself.
    pub fn of<T: Tool + Hints>(tool: &'a T) -> Self {
        Shortcuts {
            owner: std::any::TypeId::of::<T>(),
            spec: std::ptr::from_ref(tool.spec()),
            hints: tool,
        }
    }
}

/// The hints of `tool`, when it gave its own (its own type's, over the spec it shows); none
/// otherwise.
pub(crate) fn hints(tool: &dyn Tool) -> Option<&dyn Hints> {
    let shortcuts = tool.shortcuts()?;
    let owner = (tool as &dyn std::any::Any).type_id();
    let same = shortcuts.owner == owner && std::ptr::eq(shortcuts.spec, tool.spec());
    same.then_some(shortcuts.hints)
}

/// Whether argument text decodes into the tool's own input type (`None`: the tool does not
/// vouch for its input, see [`Hints::decode_input`]).
#[doc(hidden)]
pub fn decodes(tool: &dyn Tool, text: &str) -> Option<bool> {
    hints(tool)?.decode_input(text).map(|decoded| decoded.is_some())
}

pub use crate::respecified::with_spec;

/// A lifecycle hook fired before `execute` (`on_output` runs inside `execute`).
#[derive(Debug, Clone, Copy)]
pub enum InputHook<'a> {
    /// `on_input_start`
    Start,
    /// `on_input_delta` with the text delta.
    Delta(&'a str),
    /// `on_input_available` with the complete (validated) input.
    Available(&'a Value),
}

/// A payload handed to a typed transform.
pub enum Payload<'a, T: TypedTool> {
    /// The complete input (phase `input`).
    Input(&'a T::Input),
    /// A text delta of streamed input (phase `input_delta`).
    InputDelta(&'a str),
    /// The output (phase `output`).
    Output(&'a T::Output),
    /// An error (phase `error`).
    Error(&'a ToolError),
    /// The arguments of an approval request (phase `approval`).
    Approval(&'a T::Input),
    /// A suspend payload (phase `suspend`).
    Suspend(&'a T::Suspend),
    /// Resume data (phase `resume`).
    Resume(&'a T::Resume),
}

/// The static parts of a typed tool's spec (everything but the schemas, which come from its
/// types, and the examples, from [`TypedTool::input_examples`]): what [`TypedTool::meta`]
/// returns. Its parts are the spec's own ([`Policy`], [`Presentation`], [`Behaviour`]), moved
/// into it as they are. `#[tool]` fills it from the attribute; a hand-written [`TypedTool`]
/// sets what it needs and leaves the rest to `Default`.
#[derive(Debug, Clone, Default)]
pub struct ToolMeta {
    /// The tool id.
    pub id: &'static str,
    /// What the tool does.
    pub description: &'static str,
    /// A human-readable title.
    pub title: Option<&'static str>,
    /// Approval, scopes, strictness, placement, background and exactly-once settings.
    pub policy: Policy,
    /// MCP annotations, tags and provider options (its examples are ignored: they come from
    /// [`TypedTool::input_examples`]).
    pub presentation: Presentation,
    /// Which hooks, transforms and model output are set, and whether there is a body.
    pub behaviour: Behaviour,
    /// Whether the tool suspends (its `Suspend` type's schema is published).
    pub has_suspend: bool,
    /// Whether the tool takes resume data (its `Resume` type's schema is published).
    pub has_resume: bool,
    /// The input type's name, for error messages.
    pub input_type: &'static str,
    /// Where the tool is defined.
    pub source: SourceLocation,
    /// Whether the input type is the struct `#[tool]` generated from the function's
    /// parameters and every parameter's type decodes exactly what its derived schema accepts
    /// (sealed in tool-core: no custom `Deserialize` or `JsonSchema`, no serde attributes).
    /// Only then may a registry skip the input validator for arguments that decode. Set by
    /// `#[tool]`; a hand-written tool leaves it `false` and its arguments are always validated.
    #[doc(hidden)]
    pub plain_input: bool,
    /// Whether the output type encodes only what its derived schema accepts (sealed in
    /// tool-core: std types without floats). Only then may a registry skip checking what the
    /// body returned against the output schema. Set by `#[tool]`; a hand-written tool leaves it
    /// `false` and its outputs are always checked.
    #[doc(hidden)]
    pub plain_output: bool,
}

/// Why a tool with a body takes no result from the application.
const RUNS_ITS_OWN_BODY: &str = "this tool runs its own body: it takes no result from the application";

/// A tool with typed input, output, context and suspend/resume payloads: what `#[tool]`
/// implements.
///
/// Implementing it by hand works too; wrap the type in [`TypedTool::into_tool`] (or let the
/// macro do it) to get a [`Tool`].
pub trait TypedTool: Send + Sync + Sized + 'static {
    /// The validated input.
    type Input: DeserializeOwned + JsonSchema + Send + Sync + 'static;
    /// The raw output.
    type Output: Serialize + JsonSchema + Send + Sync + 'static;
    /// The request-context type.
    type Context: DeserializeOwned + JsonSchema + Send + Sync + 'static;
    /// The suspend payload type: what [`ToolContext::suspend`] takes (read back when a
    /// suspended call is shown or resumed). `Value` for a tool that declares none: its
    /// payloads are untyped and `ToolMeta::has_suspend` is `false` (no schema is published).
    type Suspend: Serialize + DeserializeOwned + JsonSchema + Send + Sync + 'static;
    /// The resume data type: what [`ToolContext::resume_data`] gives (`Value` for a tool that
    /// declares none, with `ToolMeta::has_resume` `false`).
    type Resume: DeserializeOwned + JsonSchema + Send + Sync + 'static;

    // What of the optional machinery the tool declares, known when it is compiled. `#[tool]`
    // sets each from its attributes (a tool implemented by hand keeps the defaults: all of it),
    // so a crate of many tools does not compile, for each of them, the code of hooks,
    // transforms, predicates and results it never declared: a `false` here is a branch the
    // compiler drops before generating code for it (with 50 tools, 29 % less LLVM IR: 414k
    // lines down to 293k, `cargo llvm-lines`; bench/build_time). Each must agree with `meta()`.
    /// Whether the tool has a display or transcript transform ([`TypedTool::transform`]).
    #[doc(hidden)]
    const HAS_TRANSFORM: bool = true;
    /// Whether the tool has an input hook (`on_input_start`, `on_input_delta`, `on_input_available`).
    #[doc(hidden)]
    const HAS_INPUT_HOOKS: bool = true;
    /// Whether the tool has an `on_output` hook.
    #[doc(hidden)]
    const HAS_ON_OUTPUT: bool = true;
    /// Whether the tool has a `to_model_output`.
    #[doc(hidden)]
    const HAS_MODEL_OUTPUT: bool = true;
    /// Whether the tool has an approval predicate ([`TypedTool::approval`]).
    #[doc(hidden)]
    const HAS_APPROVAL: bool = true;
    /// Whether the tool reads results the application submits ([`TypedTool::read_result`]).
    #[doc(hidden)]
    const HAS_RESULT: bool = true;

    /// Id, description and every attribute option.
    fn meta() -> ToolMeta;

    /// The input schema (derived from `Input` unless overridden).
    fn input_schema() -> Value {
        schema::receive_schema::<Self::Input>()
    }

    /// Example inputs, serialised.
    fn input_examples() -> Vec<Value> {
        Vec::new()
    }

    /// The tool's logic (for a tool without a body, an error: it is never asked to run). Its
    /// context suspends with [`Self::Suspend`] and resumes with [`Self::Resume`].
    fn execute(
        input: Self::Input,
        cx: ToolContext<Self::Context, Self::Suspend, Self::Resume>,
    ) -> impl Future<Output = Result<Self::Output, ToolError>> + Send + 'static;

    /// Reads the result the application submitted for a call of a tool without a body
    /// (`#[tool] fn name(input: In) -> Out;` implements it for `Out: Deserialize`). A tool
    /// with a body never receives one.
    fn read_result(result: Value) -> Result<Self::Output, ToolError> {
        let _ = result;
        Err(ToolError::new(RUNS_ITS_OWN_BODY))
    }

    /// What the model sees instead of the raw output.
    fn to_model_output(output: &Self::Output) -> Option<ModelOutput> {
        let _ = output;
        None
    }

    /// The approval predicate (`Err` means required).
    fn approval(input: &Self::Input, context: &Self::Context, caller: Option<&Caller>) -> Result<bool, ToolError> {
        let _ = (input, context, caller);
        Ok(false)
    }

    /// Runs the configured transform for a target and phase; `None` if none is configured.
    fn transform(target: TransformTarget, phase: TransformPhase, payload: Payload<'_, Self>) -> Option<Result<Value, ToolError>> {
        let _ = (target, phase, payload);
        None
    }

    /// `on_input_start`
    fn on_input_start(call: &ToolCallInfo) -> Result<(), ToolError> {
        let _ = call;
        Ok(())
    }

    /// `on_input_delta`
    fn on_input_delta(call: &ToolCallInfo, delta: &str) -> Result<(), ToolError> {
        let _ = (call, delta);
        Ok(())
    }

    /// `on_input_available`
    fn on_input_available(call: &ToolCallInfo, input: &Self::Input) -> Result<(), ToolError> {
        let _ = (call, input);
        Ok(())
    }

    /// `on_output`
    fn on_output(call: &ToolCallInfo, output: &Self::Output) -> Result<(), ToolError> {
        let _ = (call, output);
        Ok(())
    }

    /// Builds the spec (schemas included) and wraps the tool for the registry.
    fn into_tool() -> Result<Arc<dyn Tool>, SchemaError> {
        typed_tool::<Self>()
    }
}

/// [`TypedTool::into_tool`]. A function of its own: rustc compiles a provided method's
/// instance beside the type it is called on (in the crate that defines the tool, which an edit
/// of any tool's body recompiles whole), but a free function's here, where an edit elsewhere
/// does not touch it.
fn typed_tool<T: TypedTool>() -> Result<Arc<dyn Tool>, SchemaError> {
    let (spec, derived, encodes_plain) = typed_spec(SpecSources::of::<T>())?;
    Ok(Arc::new(FnTool::<T> {
        spec,
        derived,
        encodes_plain,
        _tool: PhantomData,
    }))
}

/// The type of a tool's input: `InputOf<add>` names the struct `#[tool]` generated from
/// `add`'s parameters, for transforms and examples.
pub type InputOf<T> = <T as TypedTool>::Input;
/// The type of a tool's output.
pub type OutputOf<T> = <T as TypedTool>::Output;

/// Where a typed tool's spec comes from: its functions and its types' schemas, so that only
/// naming them is compiled once per tool; [`typed_spec`] and [`spec_of`] do the rest, compiled
/// once for every tool.
struct SpecSources {
    meta: fn() -> ToolMeta,
    /// Whether the context type is not the untyped [`RequestContext`] (its schema is published).
    typed_context: bool,
    input: fn() -> Value,
    output: fn() -> Option<Value>,
    suspend: fn() -> Option<Value>,
    resume: fn() -> Value,
    request_context: fn() -> Value,
    input_examples: fn() -> Vec<Value>,
    /// The schema derived from the input type (the input schema may be an override).
    derived_input: fn() -> Value,
}

impl SpecSources {
    fn of<T: TypedTool>() -> Self {
        SpecSources {
            meta: T::meta,
            typed_context: std::any::TypeId::of::<T::Context>() != std::any::TypeId::of::<RequestContext>(),
            input: T::input_schema,
            output: schema::produce_schema::<T::Output>,
            suspend: schema::produce_schema::<T::Suspend>,
            resume: schema::receive_schema::<T::Resume>,
            request_context: schema::receive_schema::<T::Context>,
            input_examples: T::input_examples,
            derived_input: schema::receive_schema::<T::Input>,
        }
    }
}

/// A typed tool's spec (schemas included), and whether its types decide its happy path: the
/// input (`derived`) when `#[tool]` vouches for it (its generated struct of plain fields) and
/// the schema is its own derived one; the output (`encodes_plain`) for a type `#[tool]`
/// vouched for. The output schema is always its own derived one here (there is no override
/// for it; a wrapper that edits the spec does not forward `encodes_plain`).
fn typed_spec(sources: SpecSources) -> Result<(ToolSpec, bool, bool), SchemaError> {
    let meta = (sources.meta)();
    let schemas = Schemas {
        input: (sources.input)(),
        output: (sources.output)(),
        suspend: meta.has_suspend.then(sources.suspend).flatten(),
        resume: meta.has_resume.then(sources.resume),
        request_context: sources.typed_context.then(sources.request_context),
    };
    let spec = spec_of(meta, schemas, (sources.input_examples)())?;
    let meta = (sources.meta)();
    let derived = meta.plain_input && !spec.behaviour.client_side && spec.schemas.input == (sources.derived_input)();
    let encodes_plain = meta.plain_output && spec.schemas.output.is_some();
    Ok((spec, derived, encodes_plain))
}

/// A tool's spec from its metadata, its types' schemas and its examples: the metadata's parts
/// are moved in whole.
fn spec_of(meta: ToolMeta, schemas: Schemas, input_examples: Vec<Value>) -> Result<ToolSpec, SchemaError> {
    schema::check_input_root(meta.id, meta.input_type, &schemas.input)?;
    if let Some(ctx) = &schemas.request_context {
        schema::check_input_root(meta.id, "context", ctx)?;
    }
    Ok(ToolSpec {
        id: meta.id.to_owned(),
        description: schema::reflow_doc(meta.description),
        title: meta.title.map(str::to_owned),
        schemas,
        policy: meta.policy,
        presentation: Presentation {
            input_examples,
            ..meta.presentation
        },
        behaviour: meta.behaviour,
        source: meta.source,
    })
}

fn decode_error(kind: ErrorKind, what: &str, e: serde_json::Error) -> ToolError {
    // `serde` quotes the value it could not read in full: bound it.
    let message = crate::json::bound_quotes(&e.to_string());
    ToolError::invalid(
        kind,
        format!("{what} could not be read: {message}"),
        vec![Issue {
            path: String::new(),
            message,
        }],
    )
}
