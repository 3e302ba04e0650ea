//! The registry: every tool a process knows, found at link time or added at run time.
//!
//! Owns [`Registry`] (lookup, listing, dynamic insertion and removal, `call`), [`ToolDef`] (the
//! `inventory` record each `#[tool]` submits) and [`RegistryError`]. Validation details live in
//! `call`; the registry wires one call through them in order, in one pipeline every entry
//! point shares: `Registry::prepare` (limits → arguments → context), the approval gate,
//! `Prepared::run` (execution → suspension → output).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, OnceLock, RwLock};

use serde_json::Value;

use crate::budget::OutputBudget;
use crate::call::{self, CallArgs, CallOptions, Compiled, Finished, Limits};
use crate::error::{ErrorKind, ToolError};
use crate::isolate::ExecutionPolicy;
use crate::schema::SchemaError;
use crate::spec::SourceLocation;
use crate::tool::{DynamicTool, Tool, ToolOutput};

mod prepared;
#[cfg(feature = "runtime")]
pub(crate) use prepared::OwnedPrepared;
pub(crate) use prepared::Prepared;

/// What each `#[tool]` submits to the link-time collection. Hidden: generated code builds it,
/// users never do (they add tools with [`Registry::insert`]).
#[doc(hidden)]
pub struct ToolDef {
    pub id: &'static str,
    pub crate_name: &'static str,
    pub module_path: &'static str,
    pub file: &'static str,
    pub line: u32,
    pub build: fn() -> Result<Arc<dyn Tool>, SchemaError>,
}

inventory::collect!(ToolDef);

/// Whether a tool of package `crate_name` defined in module `module_path` is in `path`: that
/// package, that module, or a module below it (a prefix of a module's name is not its parent).
pub(crate) fn defined_in(crate_name: &str, module_path: &str, path: &str) -> bool {
    crate_name == path || module_path == path || module_path.strip_prefix(path).is_some_and(|rest| rest.starts_with("::"))
}

impl ToolDef {
    fn location(&self) -> SourceLocation {
        SourceLocation {
            crate_name: self.crate_name.to_owned(),
            module_path: self.module_path.to_owned(),
            file: self.file.to_owned(),
            line: self.line,
        }
    }
}

/// One problem found while building a registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryProblem {
    /// Two tools share an id.
    DuplicateId {
        /// The id.
        id: String,
        /// The first definition.
        first: SourceLocation,
        /// The second definition.
        second: SourceLocation,
    },
    /// A tool's spec is unusable (non-object input root, schema that does not compile, …).
    InvalidTool {
        /// The tool id.
        id: String,
        /// Its definition.
        location: SourceLocation,
        /// What is wrong.
        message: String,
    },
}

impl fmt::Display for RegistryProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryProblem::DuplicateId { id, first, second } => {
                write!(
                    f,
                    "two tools have the id `{id}`: one defined at {first}, the other at {second}; give one of them another `id = \"...\"`"
                )
            }
            RegistryProblem::InvalidTool { id, location, message } => write!(f, "tool `{id}` defined at {location} is invalid: {message}"),
        }
    }
}

/// Every problem found while building a registry (all of them, not just the first).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct RegistryError(pub Vec<RegistryProblem>);

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the tool registry could not be built:")?;
        for p in &self.0 {
            write!(f, "\n- {p}")?;
        }
        Ok(())
    }
}

#[derive(Clone)]
struct Entry {
    tool: Arc<dyn Tool>,
    compiled: Arc<Compiled>,
    /// The tool's id, shared with every call's [`crate::context::ToolCallInfo`].
    name: Arc<str>,
}

/// A set of tools: lookup, listing and validated calls.
///
/// [`Registry::global`] holds every `#[tool]` of every linked crate; [`Registry::from_iter`]
/// builds an explicit set. Both also accept [`DynamicTool`]s at run time.
pub struct Registry {
    tools: RwLock<Tools>,
    limits: Limits,
    changes: tokio::sync::watch::Sender<u64>,
}

/// The tools by id, and where their bodies run: under one lock, so a call reads both at once.
struct Tools {
    map: BTreeMap<String, Entry>,
    execution: Arc<ExecutionPolicy>,
    /// The model-output budget of tools that set none.
    budget: Option<OutputBudget>,
}

impl std::ops::Deref for Tools {
    type Target = BTreeMap<String, Entry>;
    fn deref(&self) -> &Self::Target {
        &self.map
    }
}

impl std::ops::DerefMut for Tools {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.map
    }
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("tools", &self.ids())
            .field("limits", &self.limits)
            .field("execution", &self.execution())
            .finish()
    }
}

impl Default for Registry {
    fn default() -> Self {
        Registry::new()
    }
}

/// Anything that can become a registry entry.
pub trait IntoTool {
    /// Converts it, or says why it cannot be used.
    fn into_tool(self) -> Result<Arc<dyn Tool>, SchemaError>;
}

impl IntoTool for Arc<dyn Tool> {
    fn into_tool(self) -> Result<Arc<dyn Tool>, SchemaError> {
        Ok(self)
    }
}

impl IntoTool for Result<Arc<dyn Tool>, SchemaError> {
    fn into_tool(self) -> Result<Arc<dyn Tool>, SchemaError> {
        self
    }
}

impl IntoTool for DynamicTool {
    fn into_tool(self) -> Result<Arc<dyn Tool>, SchemaError> {
        Ok(Arc::new(self))
    }
}

impl Registry {
    /// An empty registry with default limits.
    pub fn new() -> Self {
        Registry {
            tools: RwLock::new(Tools {
                map: BTreeMap::new(),
                execution: Arc::new(ExecutionPolicy::default()),
                budget: None,
            }),
            limits: Limits::default(),
            changes: tokio::sync::watch::Sender::new(0),
        }
    }

    /// Replaces the argument limits.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The argument limits in force.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Replaces where tool bodies run: the blocking pool, process isolation and its limits (see
    /// [`crate::isolate`]), for calls prepared from now on (a shared registry, like
    /// [`Registry::global`], is configured the same way; calls already running keep their policy).
    pub fn set_execution(&self, policy: ExecutionPolicy) {
        self.tools.write().unwrap_or_else(|p| p.into_inner()).execution = Arc::new(policy);
    }

    /// Where tool bodies run.
    pub fn execution(&self) -> Arc<ExecutionPolicy> {
        self.tools.read().unwrap_or_else(|p| p.into_inner()).execution.clone()
    }

    /// Bounds what the model sees of each result of a tool that sets no `max_model_output` of
    /// its own (a tool's own maximum counts in this budget's unit: see [`crate::budget`]).
    ///
    /// ```
    /// use tool_core::budget::OutputBudget;
    /// use tool_core::{CallOptions, DynamicTool, ModelOutput, Registry};
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let big = DynamicTool::builder("big", "Returns a lot")
    ///     .handler(|_, _| async move { Ok(serde_json::json!("x".repeat(100_000))) })
    ///     .unwrap();
    /// let registry = Registry::try_from_tools([big]).unwrap();
    /// registry.set_model_output_budget(Some(OutputBudget::parse("4KiB").unwrap()));
    /// let out = registry.call("big", serde_json::json!({}), CallOptions::default()).await.unwrap();
    /// assert_eq!(out.value().as_str().unwrap().len(), 100_000, "the application has it all");
    /// let ModelOutput::Text(seen) = out.for_model() else { panic!() };
    /// assert!(seen.len() < 4096 + 300 && seen.contains("left out here"));
    /// # });
    /// ```
    ///
    /// Replaces the default (`None`: nothing is cut), for calls prepared from now on.
    pub fn set_model_output_budget(&self, budget: Option<OutputBudget>) {
        self.tools.write().unwrap_or_else(|p| p.into_inner()).budget = budget;
    }

    /// The default model-output budget.
    pub fn model_output_budget(&self) -> Option<OutputBudget> {
        self.tools.read().unwrap_or_else(|p| p.into_inner()).budget.clone()
    }

    /// Every `#[tool]` linked into this process, collected once. Fails with every duplicate id
    /// (naming both definitions) and every invalid tool.
    pub fn try_global() -> Result<&'static Registry, &'static RegistryError> {
        static GLOBAL: OnceLock<Result<Registry, RegistryError>> = OnceLock::new();
        GLOBAL.get_or_init(Registry::from_inventory).as_ref()
    }

    /// Like [`Registry::try_global`], but a broken set of definitions is a startup panic with
    /// the full list of problems.
    pub fn global() -> &'static Registry {
        match Registry::try_global() {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        }
    }

    /// Every `#[tool]` linked into this process that is defined in this module or below it
    /// (`my_crate::billing`), or in this package (`my-crate`, as Cargo names it), checked like [`Registry::try_global`]
    /// but without building the global registry: tools elsewhere in the process may share ids
    /// with these, as test programs that define the same tool twice do.
    ///
    /// ```
    /// use tool_core::prelude::*;
    ///
    /// /// Says hello
    /// #[tool]
    /// async fn hello() -> String {
    ///     "hello".into()
    /// }
    ///
    /// let registry = Registry::from_module(module_path!()).unwrap();
    /// assert!(registry.get("hello").is_some());
    /// assert!(Registry::from_module("no_such_crate").unwrap().is_empty());
    /// ```
    pub fn from_module(path: &str) -> Result<Registry, RegistryError> {
        Registry::from_defs(|def| defined_in(def.crate_name, def.module_path, path))
    }

    /// Builds the one linked `#[tool]` with this id defined at `source` (`file:line`): what
    /// an isolated worker runs. The error completes "the tool's process …".
    #[cfg(feature = "isolate")]
    pub(crate) fn linked_tool(id: &str, source: &str) -> Result<Arc<dyn Tool>, String> {
        let defs: Vec<&ToolDef> = inventory::iter::<ToolDef>.into_iter().filter(|d| d.id == id).collect();
        let Some(def) = defs.iter().find(|d| format!("{}:{}", d.file, d.line) == source) else {
            return Err(match defs.first() {
                None => format!("has no tool `{id}`: it runs only `#[tool]`s linked into the binary"),
                Some(other) => format!(
                    "has another tool `{id}` (defined at {}) than the one called (defined at {source})",
                    other.location()
                ),
            });
        };
        (def.build)().map_err(|e| format!("cannot build the tool `{id}`: {}", e.0))
    }

    fn from_inventory() -> Result<Registry, RegistryError> {
        Registry::from_defs(|_| true)
    }

    fn from_defs(keep: impl Fn(&ToolDef) -> bool) -> Result<Registry, RegistryError> {
        let mut defs: Vec<&ToolDef> = inventory::iter::<ToolDef>.into_iter().filter(|d| keep(d)).collect();
        defs.sort_by(|a, b| (a.id, a.file, a.line).cmp(&(b.id, b.file, b.line)));
        let mut problems = Vec::new();
        let mut located: BTreeMap<&str, SourceLocation> = BTreeMap::new();
        let registry = Registry::new();
        for def in defs {
            if let Some(first) = located.get(def.id) {
                problems.push(RegistryProblem::DuplicateId {
                    id: def.id.to_owned(),
                    first: first.clone(),
                    second: def.location(),
                });
                continue;
            }
            located.insert(def.id, def.location());
            let added = (def.build)().map(|tool| registry.insert_entry(tool));
            if let Err(e) = added {
                problems.push(RegistryProblem::InvalidTool {
                    id: def.id.to_owned(),
                    location: def.location(),
                    message: e.0,
                });
            }
        }
        if problems.is_empty() {
            Ok(registry)
        } else {
            Err(RegistryError(problems))
        }
    }

    /// Builds an explicit set; every problem is reported.
    pub fn try_from_tools<I>(tools: I) -> Result<Registry, RegistryError>
    where
        I: IntoIterator,
        I::Item: IntoTool,
    {
        let registry = Registry::new();
        let mut problems = Vec::new();
        for t in tools {
            match t.into_tool() {
                Ok(tool) => {
                    if let Err(p) = registry.insert(tool) {
                        problems.extend(p.0);
                    }
                }
                Err(e) => problems.push(RegistryProblem::InvalidTool {
                    id: String::new(),
                    location: SourceLocation::default(),
                    message: e.0,
                }),
            }
        }
        if problems.is_empty() {
            Ok(registry)
        } else {
            Err(RegistryError(problems))
        }
    }

    /// Adds a tool; its schemas are compiled when first needed (`call::Compiled`).
    fn insert_entry(&self, tool: Arc<dyn Tool>) {
        let compiled = Arc::new(Compiled::new(tool.clone()));
        let id = tool.spec().id.clone();
        self.tools.write().unwrap_or_else(|p| p.into_inner()).insert(
            id.clone(),
            Entry {
                tool,
                compiled,
                name: id.into(),
            },
        );
        self.changes.send_modify(|v| *v += 1);
    }

    /// How many times the set of tools changed (an insertion or removal adds one).
    pub fn version(&self) -> u64 {
        *self.changes.borrow()
    }

    /// Wakes on every change of the set of tools (what MCP's `list_changed` follows).
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// Adds a tool (a dynamic tool, or a `#[tool]`'s `name::tool()`); an existing id is an error.
    pub fn insert(&self, tool: impl IntoTool) -> Result<(), RegistryError> {
        let invalid = |id: String, location: SourceLocation, message: String| {
            RegistryError(vec![RegistryProblem::InvalidTool { id, location, message }])
        };
        let tool = tool
            .into_tool()
            .map_err(|e| invalid(String::new(), SourceLocation::default(), e.0))?;
        let spec = tool.spec();
        if let Some(existing) = self.get(&spec.id) {
            return Err(RegistryError(vec![RegistryProblem::DuplicateId {
                id: spec.id.clone(),
                first: existing.spec().source.clone(),
                second: spec.source.clone(),
            }]));
        }
        self.insert_entry(tool);
        Ok(())
    }

    /// Removes a tool by id, returning it.
    pub fn remove(&self, id: &str) -> Option<Arc<dyn Tool>> {
        let removed = self.tools.write().unwrap_or_else(|p| p.into_inner()).remove(id).map(|e| e.tool);
        if removed.is_some() {
            self.changes.send_modify(|v| *v += 1);
        }
        removed
    }

    /// Compiles every tool's schemas now, and reports each tool whose schema does not compile
    /// (all of them). A registry compiles a tool's schemas when a call of it first needs them,
    /// so entering a registry stays cheap (a cold start with a thousand tools compiles only
    /// what it calls); a call of a tool whose schema does not compile is refused and the tool
    /// does not run. Call this where a definition error should stop the process instead —
    /// `toolsmith check` does; `toolsmith serve` does it on a background thread once it listens
    /// and logs what it finds. Compiling twice is free: each tool compiles once.
    ///
    /// ```
    /// use serde_json::json;
    /// use tool_core::prelude::*;
    ///
    /// // Valid JSON Schema, but its `$ref` points nowhere: it cannot be compiled.
    /// let broken = DynamicTool::builder("broken", "Has a dangling reference")
    ///     .input_schema(json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/missing"}}}))
    ///     .handler(|_, _| async { Ok(json!(null)) })
    ///     .unwrap();
    /// let registry = Registry::try_from_tools([broken]).unwrap();
    /// let problems = registry.compile_schemas().unwrap_err();
    /// assert!(problems.to_string().contains("the input schema does not compile"));
    /// ```
    pub fn compile_schemas(&self) -> Result<(), RegistryError> {
        let entries: Vec<Entry> = self.tools.read().unwrap_or_else(|p| p.into_inner()).values().cloned().collect();
        let problems: Vec<RegistryProblem> = entries
            .iter()
            .filter_map(|e| {
                let spec = e.tool.spec();
                e.compiled.compile().err().map(|err| RegistryProblem::InvalidTool {
                    id: spec.id.clone(),
                    location: spec.source.clone(),
                    message: err.0,
                })
            })
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            Err(RegistryError(problems))
        }
    }

    /// Compiles tool `id`'s schemas now if they are not yet (`None` for an unknown id).
    #[cfg(feature = "check")]
    pub(crate) fn compile_tool(&self, id: &str) -> Option<Result<(), SchemaError>> {
        self.entry(id).map(|e| e.compiled.compile())
    }

    fn entry(&self, id: &str) -> Option<Entry> {
        self.tools.read().unwrap_or_else(|p| p.into_inner()).get(id).cloned()
    }

    /// The tool with this id.
    pub fn get(&self, id: &str) -> Option<Arc<dyn Tool>> {
        self.entry(id).map(|e| e.tool)
    }

    /// All tools, ordered by id.
    pub fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .map(|e| e.tool.clone())
            .collect()
    }

    /// All ids, ordered.
    pub fn ids(&self) -> Vec<String> {
        self.tools.read().unwrap_or_else(|p| p.into_inner()).keys().cloned().collect()
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.tools.read().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether there are no tools.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The error for an unknown id: every available id, closest match first.
    pub(crate) fn unknown(&self, id: &str) -> ToolError {
        let mut ids = self.ids();
        ids.sort_by(|a, b| {
            strsim::normalized_damerau_levenshtein(id, b)
                .total_cmp(&strsim::normalized_damerau_levenshtein(id, a))
                .then_with(|| a.cmp(b))
        });
        let list = if ids.is_empty() {
            "none".to_owned()
        } else {
            ids.iter().map(|i| format!("`{i}`")).collect::<Vec<_>>().join(", ")
        };
        ToolError::with_details(
            format!("There is no tool `{id}`. Available tools (closest first): {list}"),
            serde_json::json!({ "available": ids }),
        )
        .with_kind_of(ErrorKind::UnknownTool)
    }

    /// Calls a tool: limits, input validation (with forgiveness), request-context validation,
    /// the approval gate (a tool that needs approval is not run: approving is the runtime's
    /// job), execution (panics caught, cancellation and timeout honoured), output validation.
    ///
    /// Every failure is a model-readable [`ToolError`] value. A tool that suspends itself
    /// cannot be resumed by a plain call: that is an error too (use a `Runtime`), and so is a
    /// client-side tool (no body: its result comes from the application, through a runtime).
    pub async fn call<'a>(&self, id: &str, args: impl Into<CallArgs<'a>>, mut options: CallOptions) -> Result<ToolOutput, ToolError> {
        // One async step (awaiting the body) between synchronous ones, inside the call's span:
        // the future stays small and nothing large is moved from one layer to the next.
        let call_id = options.data.tool_call_id.take().unwrap_or_else(call::new_call_id);
        let span = call::call_span(id, &call_id, None);
        // Looked up again only for a span someone records (the call's own lookup is `prepare`'s).
        if let Some(tool) = (!span.is_disabled()).then(|| self.get(id)).flatten() {
            call::trace::describe(&span, tool.spec());
        }
        let failed = |e: ToolError| {
            call::record_error(&span, &e);
            Err(e)
        };
        let args = args.into();
        let prepared = match span.in_scope(|| {
            self.prepare(id, &args, options.data.context.take())
                .and_then(|p| p.gate(options.data.caller.as_deref()).map(|()| p))
        }) {
            Ok(p) => p,
            Err(e) => return failed(e),
        };
        let env = std::mem::take(&mut options.env);
        let (running, call_id) = match span.in_scope(|| prepared.start(call_id, &options.data.take_shared(), env, None)) {
            Ok(started) => started,
            Err(e) => return failed(e),
        };
        let ran = call::executed(span.in_scope(call::trace::execution_span), running).await;
        match span.in_scope(|| prepared.finish(ran, call_id)) {
            Ok(Finished::Output(output)) => Ok(output),
            Ok(Finished::Suspended(suspension)) => failed(
                ToolError::with_details(
                    format!("Tool `{id}` suspended itself to wait for input, and a plain call cannot be resumed; it was stopped. Call it through a runtime to resume it."),
                    suspension.payload,
                )
                .for_tool(id),
            ),
            Err(e) => failed(e),
        }
    }

    /// Checks data meant to resume a suspended call of tool `id` against its resume schema,
    /// with the same model-readable errors as a resume: what an agent calls after it asked its
    /// model to extract resume data from its user's answer (the schema is the waiting call's
    /// `resume_schema`, or the catalog's), before it resumes the call.
    ///
    /// ```
    /// # use tool_core::{tool::DynamicTool, Registry};
    /// # use serde_json::json;
    /// let ask = DynamicTool::builder("ask", "Asks a question")
    ///     .with_spec(|s| s.schemas.resume = Some(json!({"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]})))
    ///     .handler(|_, _| async move { Ok(json!(null)) })
    ///     .unwrap();
    /// let registry = Registry::try_from_tools([ask]).unwrap();
    /// assert!(registry.validate_resume_data("ask", &json!({"answer": "yes"})).is_ok());
    /// let err = registry.validate_resume_data("ask", &json!({"reply": "yes"})).unwrap_err();
    /// assert!(err.message().contains("answer"), "{}", err.message());
    /// ```
    pub fn validate_resume_data(&self, id: &str, data: &Value) -> Result<(), ToolError> {
        let entry = self.entry(id).ok_or_else(|| self.unknown(id))?;
        call::validate_resume(id, &entry.compiled, data)
    }

    /// Whether a tool here will compile its schemas at its first call: its happy path needs a
    /// validator and nothing compiled it yet. A server that serves such a tool starts building
    /// what that compilation waits for as it starts (`call::warm_up_compiler`). What the tests
    /// of that warm-up ask.
    #[doc(hidden)]
    pub fn compiles_at_first_call(&self) -> bool {
        let tools = self.tools.read().unwrap_or_else(|p| p.into_inner());
        tools.values().any(|e| !e.compiled.needs_none() && !e.compiled.is_compiled())
    }

    /// Whether tool `id`'s schemas have been compiled yet (by a call that needed them, or
    /// [`Registry::compile_schemas`]). `None` for an unknown id. What the tests of lazy
    /// compilation ask.
    #[doc(hidden)]
    pub fn schemas_compiled(&self, id: &str) -> Option<bool> {
        self.entry(id).map(|e| e.compiled.is_compiled())
    }

    /// Whether calls of tool `id` skip the input validator on the happy path: its input type
    /// enforces everything its schema says (decided from the schema's keywords when the tool
    /// entered this registry), so arguments that decode are valid. `None` for an unknown id.
    /// What the property tests that hold this implication ask.
    #[doc(hidden)]
    pub fn skips_input_validation(&self, id: &str) -> Option<bool> {
        self.entry(id).map(|e| e.compiled.input_implied())
    }

    /// Whether what the body of tool `id` returns skips the output check: its output type
    /// encodes only what its schema accepts (decided from the schema's keywords when the tool
    /// entered this registry). `None` for an unknown id. What the output property tests ask.
    #[doc(hidden)]
    pub fn skips_output_validation(&self, id: &str) -> Option<bool> {
        self.entry(id).map(|e| e.compiled.output_implied())
    }

    /// The first step of every call: the tool, the limits, the arguments (validated and
    /// repaired) and the request context. Text that is valid as sent stays borrowed.
    pub(crate) fn prepare<'a>(&self, id: &str, args: &'a CallArgs<'_>, context: Option<Value>) -> Result<Prepared<'a>, ToolError> {
        let (entry, policy, budget) = {
            let tools = self.tools.read().unwrap_or_else(|p| p.into_inner());
            (tools.get(id).cloned(), tools.execution.clone(), tools.budget.clone())
        };
        let entry = entry.ok_or_else(|| self.unknown(id))?;
        let budget = OutputBudget::resolve(entry.tool.spec().policy.max_model_output, budget.as_ref());
        let _validating = call::trace::validation_span().entered();
        // Compiled at the tool's first call (once): a tool whose schemas do not compile is
        // refused here, whatever its arguments, and does not run.
        entry.compiled.ready()?;
        // The limits' pass over the text also tells whether it surely repeats no key, asked only
        // where that answer lets valid text skip the validator.
        let unique = call::check_limits(id, args, &self.limits, entry.compiled.input_implied())?;
        let input = call::validate_args(&*entry.tool, &entry.compiled, args, unique)?;
        let context = call::validate_context(id, &entry.compiled, context)?;
        Ok(Prepared {
            entry,
            input,
            context,
            policy,
            budget,
        })
    }

    /// Like [`Registry::call`], with the error as its JSON value: what a model receives.
    pub async fn call_json<'a>(&self, id: &str, args: impl Into<CallArgs<'a>>, options: CallOptions) -> Value {
        match self.call(id, args, options).await {
            Ok(out) => out.value(),
            Err(e) => e.to_json(),
        }
    }
}

impl<T: IntoTool> FromIterator<T> for Registry {
    /// Builds an explicit set of tools.
    ///
    /// # Panics
    /// On a duplicate id or an invalid tool, with every problem listed; use
    /// [`Registry::try_from_tools`] to handle that as an error.
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        match Registry::try_from_tools(iter) {
            Ok(r) => r,
            Err(e) => panic!("{e}"),
        }
    }
}
