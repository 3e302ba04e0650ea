//! The tool abstraction: one object-safe trait for every tool, and the typed trait the
//! `#[tool]` macro implements.
//!
//! Owns [`Tool`] (what the registry stores: `#[tool]` functions, hand-written tools and
//! [`DynamicTool`]s defined at run time all look the same), [`TypedTool`] (typed input, output,
//! context, suspend and resume types, plus the typed hook/transform/model-output functions
//! the attribute names) and the adapter between them. Validation, limits and panic handling are
//! `call`'s; this module only turns validated JSON into typed values and back.

use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::context::{RequestContext, ToolCallInfo, ToolContext};
use crate::error::{ErrorKind, Issue, ToolError};
use crate::model_output::ModelOutput;
use crate::schema::{self, SchemaError};
use crate::spec::{ApprovalRule, BackgroundSpec, HookSet, Isolation, McpSpec, SourceLocation, ToolSpec, TransformPhase, TransformTarget};

pub use crate::context::BoxFuture;

/// What a successful call produced.
///
/// Serialised as `{"result": <output>, "model_output"?: …}` (the shape of a result event); the
/// views' transform results stay in the process.
#[derive(Debug, Clone)]
pub struct ToolOutput {
    /// The raw output as JSON text, as the application receives it (`null` for `()`).
    pub json: Box<RawValue>,
    /// What the model sees, when the tool has a `to_model_output` (skipped for null output).
    pub model_output: Option<ModelOutput>,
    /// The output as the display target shows it, when a display output transform is set.
    pub display: Option<Result<Value, String>>,
    /// The output as the transcript shows it, when a transcript output transform is set.
    pub transcript: Option<Result<Value, String>>,
}

/// The serialised shape of a [`ToolOutput`].
#[derive(Serialize, Deserialize)]
struct OutputWire {
    result: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model_output: Option<ModelOutput>,
}

impl Serialize for ToolOutput {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        OutputWire {
            result: self.value(),
            model_output: self.model_output.clone(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for ToolOutput {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let wire = OutputWire::deserialize(d)?;
        Ok(ToolOutput {
            model_output: wire.model_output,
            ..ToolOutput::new(wire.result)
        })
    }
}

impl PartialEq for ToolOutput {
    fn eq(&self, other: &Self) -> bool {
        self.value() == other.value()
            && self.model_output == other.model_output
            && self.display == other.display
            && self.transcript == other.transcript
    }
}

impl ToolOutput {
    /// A plain output with no model output and no transforms.
    pub fn new(value: Value) -> Self {
        Self::from_json(serde_json::value::to_raw_value(&value).unwrap_or_else(|_| null_json()))
    }

    /// A plain output from JSON text already produced.
    pub fn from_json(json: Box<RawValue>) -> Self {
        ToolOutput {
            json,
            model_output: None,
            display: None,
            transcript: None,
        }
    }

    /// The raw output as a JSON value.
    pub fn value(&self) -> Value {
        serde_json::from_str(self.json.get()).unwrap_or(Value::Null)
    }

    /// Whether the output is `null` (a `()` tool).
    pub fn is_null(&self) -> bool {
        self.json.get() == "null"
    }

    /// What the model receives: the `to_model_output` result, or the raw value as JSON.
    pub fn for_model(&self) -> ModelOutput {
        self.model_output.clone().unwrap_or_else(|| ModelOutput::Json(self.value()))
    }
}

fn null_json() -> Box<RawValue> {
    RawValue::from_string("null".to_owned()).unwrap_or_else(|_| unreachable!("`null` is JSON"))
}

/// Validated input handed to [`Tool::execute`]: the argument text itself (decoded straight into
/// the tool's input type) or a value (when it was given as one, or repaired).
#[derive(Debug, Clone, Copy)]
pub enum ToolInput<'a> {
    /// Valid JSON text.
    Text(&'a str),
    /// A valid value.
    Value(&'a Value),
}

impl ToolInput<'_> {
    /// Decodes into any deserialisable type.
    pub fn decode<T: DeserializeOwned>(self) -> Result<T, serde_json::Error> {
        match self {
            ToolInput::Text(t) => serde_json::from_str(t),
            ToolInput::Value(v) => T::deserialize(v),
        }
    }
}

/// Any tool the registry can hold. Object-safe.
///
/// `execute` receives input and request context that the registry has already validated
/// against the spec's schemas.
pub trait Tool: Send + Sync + 'static {
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
    /// [`ApprovalRule::Predicate`]. A predicate that fails means approval is required.
    fn requires_approval(&self, input: ToolInput<'_>, context: &Map<String, Value>) -> bool {
        let _ = (input, context);
        self.spec().require_approval != ApprovalRule::Never
    }

    /// Runs a value-level transform for a target and phase over a payload (input, input delta,
    /// error, approval, suspend, resume; output transforms run inside `execute` on the typed
    /// value and arrive in [`ToolOutput`]). `None` when none is configured.
    fn transform(&self, target: TransformTarget, phase: TransformPhase, payload: &Value) -> Option<Result<Value, String>> {
        let _ = (target, phase, payload);
        None
    }

    /// Runs a lifecycle hook before execution. Hook failures are returned, never raised.
    fn input_hook(&self, event: InputHook<'_>, call: &ToolCallInfo) -> Result<(), String> {
        let _ = (event, call);
        Ok(())
    }
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
/// types): what [`TypedTool::meta`] returns. `#[tool]` fills it from the attribute; a
/// hand-written [`TypedTool`] sets what it needs and leaves the rest to `Default`.
#[derive(Debug, Clone, Default)]
pub struct ToolMeta {
    /// The tool id.
    pub id: &'static str,
    /// What the tool does.
    pub description: &'static str,
    /// A human-readable title.
    pub title: Option<&'static str>,
    /// Whether the tool asks providers for strict schema adherence.
    pub strict: bool,
    /// Whether the body runs on the blocking pool (`blocking`).
    pub blocking: bool,
    /// Where its calls run (`isolate = "process"`).
    pub isolate: Isolation,
    /// When a call needs a person's approval (`None`: never).
    pub require_approval: Option<ApprovalRule>,
    /// MCP annotations and `_meta`.
    pub mcp: McpSpec,
    /// Provider-specific options, by provider name.
    pub provider_options: Vec<(&'static str, Value)>,
    /// Tags for selecting tools.
    pub tags: &'static [&'static str],
    /// The OAuth scopes a caller must hold (`scopes = [...]`).
    pub scopes: &'static [&'static str],
    /// Background execution settings.
    pub background: Option<BackgroundSpec>,
    /// Which lifecycle hooks are implemented.
    pub hooks: HookSet,
    /// Which transforms are implemented.
    pub transforms: Vec<(TransformTarget, TransformPhase)>,
    /// Whether `to_model_output` is implemented.
    pub has_model_output: bool,
    /// Whether the tool suspends (its `Suspend` type's schema is published).
    pub has_suspend: bool,
    /// Whether the tool takes resume data (its `Resume` type's schema is published).
    pub has_resume: bool,
    /// The input type's name, for error messages.
    pub input_type: &'static str,
    /// Where the tool is defined.
    pub source: SourceLocation,
}

/// A tool with typed input, output and context: what `#[tool]` implements.
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
    /// The suspend payload type (read back when a suspended call is shown or resumed).
    type Suspend: Serialize + DeserializeOwned + JsonSchema + Send + Sync + 'static;
    /// The resume data type.
    type Resume: DeserializeOwned + JsonSchema + Send + Sync + 'static;

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

    /// The tool's logic.
    fn execute(
        input: Self::Input,
        cx: ToolContext<Self::Context>,
    ) -> impl Future<Output = Result<Self::Output, ToolError>> + Send + 'static;

    /// What the model sees instead of the raw output.
    fn to_model_output(output: &Self::Output) -> Option<ModelOutput> {
        let _ = output;
        None
    }

    /// The approval predicate (`Err` means required).
    fn approval(input: &Self::Input, context: &Self::Context) -> Result<bool, String> {
        let _ = (input, context);
        Ok(false)
    }

    /// Runs the configured transform for a target and phase; `None` if none is configured.
    fn transform(target: TransformTarget, phase: TransformPhase, payload: Payload<'_, Self>) -> Option<Result<Value, String>> {
        let _ = (target, phase, payload);
        None
    }

    /// `on_input_start`
    fn on_input_start(call: &ToolCallInfo) -> Result<(), String> {
        let _ = call;
        Ok(())
    }

    /// `on_input_delta`
    fn on_input_delta(call: &ToolCallInfo, delta: &str) -> Result<(), String> {
        let _ = (call, delta);
        Ok(())
    }

    /// `on_input_available`
    fn on_input_available(call: &ToolCallInfo, input: &Self::Input) -> Result<(), String> {
        let _ = (call, input);
        Ok(())
    }

    /// `on_output`
    fn on_output(call: &ToolCallInfo, output: &Self::Output) -> Result<(), String> {
        let _ = (call, output);
        Ok(())
    }

    /// Builds the spec (schemas included) and wraps the tool for the registry.
    fn into_tool() -> Result<Arc<dyn Tool>, SchemaError> {
        Ok(Arc::new(FnTool::<Self> {
            spec: build_spec::<Self>()?,
            _tool: PhantomData,
        }))
    }
}

/// The type of a tool's input: `InputOf<add>` names the struct `#[tool]` generated from
/// `add`'s parameters, for transforms and examples.
pub type InputOf<T> = <T as TypedTool>::Input;
/// The type of a tool's output.
pub type OutputOf<T> = <T as TypedTool>::Output;

fn build_spec<T: TypedTool>() -> Result<ToolSpec, SchemaError> {
    let meta = T::meta();
    let input_schema = T::input_schema();
    schema::check_input_root(meta.id, meta.input_type, &input_schema)?;
    let mut spec = ToolSpec::new(meta.id, schema::reflow_doc(meta.description), input_schema);
    spec.title = meta.title.map(str::to_owned);
    spec.strict = meta.strict;
    spec.blocking = meta.blocking;
    spec.isolate = meta.isolate;
    spec.output_schema = schema::produce_schema::<T::Output>();
    spec.suspend_schema = meta.has_suspend.then(schema::produce_schema::<T::Suspend>).flatten();
    spec.resume_schema = meta.has_resume.then(schema::receive_schema::<T::Resume>);
    let typed_context = std::any::TypeId::of::<T::Context>() != std::any::TypeId::of::<RequestContext>();
    spec.request_context_schema = typed_context.then(schema::receive_schema::<T::Context>);
    if let Some(ctx) = &spec.request_context_schema {
        schema::check_input_root(meta.id, "context", ctx)?;
    }
    spec.require_approval = meta.require_approval.unwrap_or(ApprovalRule::Never);
    spec.mcp = meta.mcp;
    spec.provider_options = meta.provider_options.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    spec.input_examples = T::input_examples();
    spec.tags = meta.tags.iter().map(|t| (*t).to_owned()).collect();
    spec.scopes = meta.scopes.iter().map(|t| (*t).to_owned()).collect();
    spec.background = meta.background;
    spec.hooks = meta.hooks;
    spec.transforms = meta.transforms;
    spec.has_model_output = meta.has_model_output;
    spec.source = meta.source;
    Ok(spec)
}

/// Adapter from a [`TypedTool`] to the object-safe [`Tool`].
struct FnTool<T> {
    spec: ToolSpec,
    _tool: PhantomData<fn() -> T>,
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

/// An output transform, run on the typed output; a panic or an empty result is an `Err`.
fn output_view<T: TypedTool>(output: &T::Output, target: TransformTarget) -> Option<Result<Value, String>> {
    let run = crate::panic::catch_panic(|| T::transform(target, TransformPhase::Output, Payload::Output(output)));
    Some(run.and_then(|r| r.unwrap_or_else(|| Err("the transform yielded nothing".into()))))
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
        let decoded = input
            .decode::<T::Input>()
            .map_err(|e| decode_error(ErrorKind::InvalidInput, "the input", e))
            .and_then(|input| {
                let typed = if std::any::TypeId::of::<T::Context>() == std::any::TypeId::of::<RequestContext>() && context.is_empty() {
                    serde_json::from_value::<T::Context>(Value::Object(Map::new()))
                } else {
                    serde_json::from_value::<T::Context>(Value::Object((*context).clone()))
                };
                Ok((
                    input,
                    typed.map_err(|e| decode_error(ErrorKind::InvalidContext, "the request context", e))?,
                ))
            });
        let (input, typed_context) = match decoded {
            Ok(d) => d,
            Err(e) => return Box::pin(std::future::ready(Err(e))),
        };
        let has_model_output = self.spec.has_model_output;
        let on_output_call = self.spec.hooks.on_output.then(|| call.clone());
        let views = [TransformTarget::Display, TransformTarget::Transcript].map(|t| self.spec.has_transform(t, TransformPhase::Output));
        let fut = T::execute(input, ToolContext::new(typed_context, context, call));
        Box::pin(async move {
            let output = fut.await?;
            if let Some(call) = on_output_call {
                if let Err(e) = crate::panic::catch_panic(|| T::on_output(&call, &output)).and_then(|r| r) {
                    tracing::warn!(tool = %call.tool_name, error = %e, "on_output hook failed");
                }
            }
            let json = serde_json::value::to_raw_value(&output)
                .map_err(|e| ToolError::with_kind(ErrorKind::InvalidOutput, format!("the output could not be serialised: {e}")))?;
            let model_output = (has_model_output && json.get() != "null")
                .then(|| T::to_model_output(&output))
                .flatten();
            let view = |on: bool, target| on.then(|| output_view::<T>(&output, target)).flatten();
            Ok(ToolOutput {
                model_output,
                display: view(views[0], TransformTarget::Display),
                transcript: view(views[1], TransformTarget::Transcript),
                json,
            })
        })
    }

    fn requires_approval(&self, input: ToolInput<'_>, context: &Map<String, Value>) -> bool {
        match self.spec.require_approval {
            ApprovalRule::Never => false,
            ApprovalRule::Always => true,
            ApprovalRule::Predicate => {
                let typed = input.decode::<T::Input>().map_err(|e| e.to_string()).and_then(|i| {
                    let c = serde_json::from_value::<T::Context>(Value::Object(context.clone())).map_err(|e| e.to_string())?;
                    Ok((i, c))
                });
                // Fail closed: anything but a clean `false` means approval is required.
                let decided = typed.and_then(|(i, c)| crate::panic::catch_panic(|| T::approval(&i, &c)).and_then(|r| r));
                !matches!(decided, Ok(false))
            }
        }
    }

    fn transform(&self, target: TransformTarget, phase: TransformPhase, payload: &Value) -> Option<Result<Value, String>> {
        if !self.spec.has_transform(target, phase) {
            return None;
        }
        let run = || -> Result<Value, String> {
            let out = match phase {
                TransformPhase::Input | TransformPhase::Approval => {
                    let i: T::Input = serde_json::from_value(payload.clone()).map_err(|e| e.to_string())?;
                    let p = if phase == TransformPhase::Input {
                        Payload::Input(&i)
                    } else {
                        Payload::Approval(&i)
                    };
                    T::transform(target, phase, p)
                }
                TransformPhase::InputDelta => T::transform(target, phase, Payload::InputDelta(payload.as_str().unwrap_or_default())),
                TransformPhase::Error => {
                    let e: ToolError = serde_json::from_value(payload.clone()).map_err(|e| e.to_string())?;
                    T::transform(target, phase, Payload::Error(&e))
                }
                TransformPhase::Resume => {
                    let r: T::Resume = serde_json::from_value(payload.clone()).map_err(|e| e.to_string())?;
                    T::transform(target, phase, Payload::Resume(&r))
                }
                TransformPhase::Suspend => {
                    let s: T::Suspend = serde_json::from_value(payload.clone()).map_err(|e| e.to_string())?;
                    T::transform(target, phase, Payload::Suspend(&s))
                }
                TransformPhase::Output => return Err("the output transform runs on the typed value inside execute".into()),
            };
            out.unwrap_or_else(|| Err("the transform yielded nothing".into()))
        };
        Some(crate::panic::catch_panic(run).and_then(|r| r))
    }

    fn input_hook(&self, event: InputHook<'_>, call: &ToolCallInfo) -> Result<(), String> {
        crate::panic::catch_panic(|| match event {
            InputHook::Start => T::on_input_start(call),
            InputHook::Delta(d) => T::on_input_delta(call, d),
            InputHook::Available(v) => {
                let input: T::Input = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
                T::on_input_available(call, &input)
            }
        })
        .and_then(|r| r)
    }
}

type Handler = dyn Fn(Value, ToolContext<RequestContext>) -> BoxFuture<'static, Result<ToolOutput, ToolError>> + Send + Sync;

/// A tool defined at run time from an id, a description, JSON Schemas and an async handler
/// over JSON: how remote tools (providers, MCP servers) become ordinary tools.
///
/// ```
/// use tool_core::{DynamicTool, Registry, CallOptions};
/// use serde_json::json;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let echo = DynamicTool::builder("echo", "Echo the text back")
///     .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}))
///     .handler(|input, _cx| async move { Ok(input["text"].clone()) })
///     .unwrap();
/// let registry = Registry::from_iter([echo.into_tool()]);
/// let out = registry.call("echo", json!({"text": "hi"}), CallOptions::default()).await.unwrap();
/// assert_eq!(out.value(), json!("hi"));
/// # });
/// ```
pub struct DynamicTool {
    spec: ToolSpec,
    handler: Arc<Handler>,
}

impl std::fmt::Debug for DynamicTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DynamicTool").field("spec", &self.spec).finish_non_exhaustive()
    }
}

/// Builder for a [`DynamicTool`].
#[derive(Debug)]
pub struct DynamicToolBuilder {
    spec: ToolSpec,
}

impl DynamicTool {
    /// Starts a dynamic tool with an id and description; the input schema defaults to an
    /// object with no declared properties.
    pub fn builder(id: impl Into<String>, description: impl Into<String>) -> DynamicToolBuilder {
        DynamicToolBuilder {
            spec: ToolSpec::new(id, description, serde_json::json!({"type": "object"})),
        }
    }

    /// Wraps it for the registry.
    pub fn into_tool(self) -> Arc<dyn Tool> {
        Arc::new(self)
    }
}

impl DynamicToolBuilder {
    /// The input JSON Schema (its root must be an object).
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.spec.input_schema = schema;
        self
    }

    /// The output JSON Schema.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.spec.output_schema = Some(schema);
        self
    }

    /// The request-context JSON Schema.
    pub fn context_schema(mut self, schema: Value) -> Self {
        self.spec.request_context_schema = Some(schema);
        self
    }

    /// A human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.spec.title = Some(title.into());
        self
    }

    /// The handler does CPU work or blocking I/O: its calls run on the registry's bounded
    /// blocking pool, never on the async workers (`#[tool(blocking)]` for a dynamic tool).
    pub fn blocking(mut self) -> Self {
        self.spec.blocking = true;
        self
    }

    /// The OAuth scopes a caller's access token must grant to call the tool (`#[tool(scopes =
    /// [...])]` for a dynamic tool); duplicates and blank entries are dropped.
    ///
    /// ```
    /// use tool_core::DynamicTool;
    /// let tool = DynamicTool::builder("crm_update", "Update a CRM record")
    ///     .scopes(["crm.write", "crm.write", " "])
    ///     .handler(|_, _| async { Ok(serde_json::json!("updated")) })
    ///     .unwrap();
    /// use tool_core::Tool;
    /// assert_eq!(tool.spec().scopes, ["crm.write"]);
    /// ```
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        for scope in scopes {
            let scope = scope.into().trim().to_owned();
            if !scope.is_empty() && !self.spec.scopes.contains(&scope) {
                self.spec.scopes.push(scope);
            }
        }
        self
    }

    /// Edits any other part of the spec (MCP annotations, provider options, …).
    pub fn with_spec(mut self, edit: impl FnOnce(&mut ToolSpec)) -> Self {
        edit(&mut self.spec);
        self
    }

    /// Sets the handler and checks the spec (id rules, object input root).
    pub fn handler<F, Fut>(self, handler: F) -> Result<DynamicTool, SchemaError>
    where
        F: Fn(Value, ToolContext<RequestContext>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        check_dynamic_id(&self.spec.id)?;
        if self.spec.isolate == Isolation::Process {
            return Err(SchemaError(format!(
                "tool `{}`: a tool defined at run time cannot run in a child process (the child finds tools among the `#[tool]`s linked into the binary); leave `isolate` unset",
                self.spec.id
            )));
        }
        if self.spec.description.trim().is_empty() {
            return Err(SchemaError(format!(
                "tool `{}`: the description is empty; the model reads it to decide when to call",
                self.spec.id
            )));
        }
        if let Some(bad) = self.spec.scopes.iter().find(|s| !crate::spec::is_scope_token(s)) {
            return Err(SchemaError(format!(
                "tool `{}`: `{bad}` is not an OAuth scope: use printable ASCII characters other than space, `\"` and `\\`",
                self.spec.id
            )));
        }
        schema::check_input_root(&self.spec.id, "input schema", &self.spec.input_schema)?;
        for (what, s) in [("output", &self.spec.output_schema), ("context", &self.spec.request_context_schema)] {
            if let Some(s) = s {
                jsonschema::validator_for(s)
                    .map_err(|e| SchemaError(format!("tool `{}`: the {what} schema is not valid JSON Schema: {e}", self.spec.id)))?;
            }
        }
        jsonschema::validator_for(&self.spec.input_schema)
            .map_err(|e| SchemaError(format!("tool `{}`: the input schema is not valid JSON Schema: {e}", self.spec.id)))?;
        Ok(DynamicTool {
            spec: self.spec,
            handler: Arc::new(move |v, cx| {
                let fut = handler(v, cx);
                Box::pin(async move { fut.await.map(ToolOutput::new) })
            }),
        })
    }
}

/// Dynamic ids follow the providers' common rule, plus the dots and slashes remote catalogs
/// use (`Toolkit.Tool`); catalogs map those for targets that forbid them.
fn check_dynamic_id(id: &str) -> Result<(), SchemaError> {
    let ok = !id.is_empty()
        && id.len() <= 128
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '@'));
    if ok {
        Ok(())
    } else {
        Err(SchemaError(format!(
            "tool id `{id}` is not valid: use 1 to 128 characters from a-z, A-Z, 0-9, `_`, `-`, `.`, `/`, `@`"
        )))
    }
}

impl Tool for DynamicTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn execute(
        &self,
        input: ToolInput<'_>,
        context: Arc<Map<String, Value>>,
        call: ToolCallInfo,
    ) -> BoxFuture<'static, Result<ToolOutput, ToolError>> {
        let input = match input.decode::<Value>() {
            Ok(v) => v,
            Err(e) => return Box::pin(std::future::ready(Err(decode_error(ErrorKind::InvalidInput, "the input", e)))),
        };
        let cx = ToolContext::new(RequestContext((*context).clone()), context, call);
        (self.handler)(input, cx)
    }
}
