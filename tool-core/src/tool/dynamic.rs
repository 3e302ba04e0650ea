//! Tools defined at run time: [`DynamicTool`] and its builder.
//!
//! Owns the checks a tool defined from JSON Schemas must pass (id rules, an object input root,
//! schemas that compile, a description) and the two ways it ends: with an async handler over
//! JSON, or with none ([`DynamicToolBuilder::client_side`]: the application answers its calls).

use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::{BoxFuture, Tool, ToolInput, ToolOutput, decode_error};
use crate::context::{RequestContext, ToolCallInfo, ToolContext};
use crate::error::{ErrorKind, ToolError};
use crate::schema::{self, SchemaError};
use crate::spec::{Isolation, ToolSpec};

type Handler = dyn Fn(Value, ToolContext<RequestContext>) -> BoxFuture<'static, Result<ToolOutput, ToolError>> + Send + Sync;

/// A tool defined at run time from an id, a description, JSON Schemas and an async handler
/// over JSON: how remote tools (providers, MCP servers) become ordinary tools. Without a
/// handler ([`DynamicToolBuilder::client_side`]) it is a definition only, whose calls the
/// application answers.
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
    /// `None`: a client-side tool (nothing in this process runs it).
    handler: Option<Arc<Handler>>,
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
        self.spec.schemas.input = schema;
        self
    }

    /// The output JSON Schema.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.spec.schemas.output = Some(schema);
        self
    }

    /// The request-context JSON Schema.
    pub fn context_schema(mut self, schema: Value) -> Self {
        self.spec.schemas.request_context = Some(schema);
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
        self.spec.policy.blocking = true;
        self
    }

    /// The most the model sees of one result, in bytes (the `max_model_output` key of
    /// `#[tool]`; see [`crate::budget`]). Over it the model gets the head and the tail.
    pub fn max_model_output(mut self, max: usize) -> Self {
        self.spec.policy.max_model_output = Some(max.max(1));
        self
    }

    /// Runs the handler exactly once per idempotency key under a runtime (the `idempotent` key
    /// of `#[tool]`): a second run of the same call answers with the recorded result. `policy`
    /// says what happens after a run that was interrupted before its result was stored
    /// ([`Idempotent::Fail`](crate::spec::Idempotent::Fail): a clear error;
    /// [`Idempotent::Recover`](crate::spec::Idempotent::Recover): the handler runs again, told by
    /// its key). Not MCP's `idempotentHint`, which is only a hint to clients.
    pub fn idempotent(mut self, policy: crate::spec::Idempotent) -> Self {
        self.spec.policy.idempotent = Some(policy);
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
    /// assert_eq!(tool.spec().policy.scopes, ["crm.write"]);
    /// ```
    pub fn scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        for scope in scopes {
            let scope = scope.into().trim().to_owned();
            if !scope.is_empty() && !self.spec.policy.scopes.contains(&scope) {
                self.spec.policy.scopes.push(scope);
            }
        }
        self
    }

    /// Leaves the tool out of a request's tool list until the model finds it with tool search
    /// (`#[tool(defer_loading)]` for a dynamic tool); a catalog may override it.
    pub fn defer_loading(mut self) -> Self {
        self.spec.presentation.defer_loading = true;
        self
    }

    /// The group the tool is listed and searched under (`#[tool(namespace = "crm")]` for a
    /// dynamic tool): 1 to 64 of `a-z`, `A-Z`, `0-9`, `_`, `-`, checked when the tool is built.
    ///
    /// ```
    /// use tool_core::DynamicTool;
    /// let built = |ns: &str| DynamicTool::builder("crm_find", "Find a customer").namespace(ns).handler(|_, _| async { Ok(serde_json::json!(null)) });
    /// assert!(built("crm").is_ok());
    /// assert!(built("crm.read").unwrap_err().to_string().contains("not a namespace"));
    /// ```
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.spec.presentation.namespace = Some(namespace.into());
        self
    }

    /// Anthropic's `eager_input_streaming` (`#[tool(eager_input_streaming)]` for a dynamic
    /// tool): `true` streams the input as the model writes it, `false` never does.
    pub fn eager_input_streaming(mut self, eager: bool) -> Self {
        self.spec.presentation.eager_input_streaming = Some(eager);
        self
    }

    /// Who may call the tool (`#[tool(allowed_callers = [...])]` for a dynamic tool): `direct`,
    /// `programmatic`, or an Anthropic code execution version such as `code_execution_20250825`
    /// (see [`is_caller`](crate::spec::is_caller)), checked when the tool is built.
    ///
    /// ```
    /// use tool_core::DynamicTool;
    /// let built = |c: &str| DynamicTool::builder("sum", "Add numbers").allowed_callers(["direct", c]).handler(|_, _| async { Ok(serde_json::json!(0)) });
    /// assert!(built("code_execution_20250825").is_ok());
    /// assert!(built("robot").unwrap_err().to_string().contains("not a caller"));
    /// ```
    pub fn allowed_callers<S: Into<String>>(mut self, callers: impl IntoIterator<Item = S>) -> Self {
        for caller in callers {
            let caller = caller.into();
            if !self.spec.presentation.allowed_callers.contains(&caller) {
                self.spec.presentation.allowed_callers.push(caller);
            }
        }
        self
    }

    /// Whether the conversation waits for the result (`#[tool(behavior = "non_blocking")]` for
    /// a dynamic tool): Gemini's `behavior`.
    pub fn behavior(mut self, behavior: crate::spec::CallBehavior) -> Self {
        self.spec.presentation.behavior = Some(behavior);
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
        self.check()?;
        Ok(DynamicTool {
            spec: self.spec,
            handler: Some(Arc::new(move |v, cx| {
                let fut = handler(v, cx);
                Box::pin(async move { fut.await.map(ToolOutput::new) })
            })),
        })
    }

    /// Ends the definition without a handler: a client-side tool, whose calls the application
    /// answers. A runtime validates each call, announces it and ends the run with
    /// `Outcome::AwaitingResult`; `Runtime::submit_result` completes it with a value checked
    /// against the output schema. Nothing in this process runs it, so it cannot be `blocking`,
    /// isolated, suspended or backgrounded.
    ///
    /// ```
    /// use tool_core::{DynamicTool, Registry, CallOptions};
    /// use serde_json::json;
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let confirm = DynamicTool::builder("confirm", "Asks the user to confirm in the browser")
    ///     .input_schema(json!({"type": "object", "properties": {"question": {"type": "string"}}, "required": ["question"]}))
    ///     .output_schema(json!({"type": "object", "properties": {"confirmed": {"type": "boolean"}}, "required": ["confirmed"]}))
    ///     .client_side()
    ///     .unwrap();
    /// let registry = Registry::try_from_tools([confirm]).unwrap();
    /// let err = registry.call("confirm", json!({"question": "Go?"}), CallOptions::default()).await.unwrap_err();
    /// assert!(err.message().contains("answered by the application"), "{}", err.message());
    /// # });
    /// ```
    pub fn client_side(mut self) -> Result<DynamicTool, SchemaError> {
        let id = &self.spec.id;
        let runs = [
            (self.spec.policy.blocking, "`blocking`"),
            (self.spec.schemas.suspend.is_some(), "a suspend schema"),
            (self.spec.schemas.resume.is_some(), "a resume schema"),
            (
                self.spec.policy.background.as_ref().is_some_and(|b| b.enabled),
                "background execution",
            ),
        ];
        if let Some((_, what)) = runs.iter().find(|(set, _)| *set) {
            return Err(SchemaError(format!(
                "tool `{id}` is client-side (the application answers its calls, nothing here runs it): it cannot have {what}; remove it"
            )));
        }
        self.spec.behaviour.client_side = true;
        self.check()?;
        Ok(DynamicTool {
            spec: self.spec,
            handler: None,
        })
    }

    /// The checks of every dynamic tool: id rules, no isolation, a description, an object input
    /// root, schemas that compile.
    fn check(&self) -> Result<(), SchemaError> {
        check_dynamic_id(&self.spec.id)?;
        if self.spec.policy.isolate == Isolation::Process {
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
        if let Some(bad) = self.spec.policy.scopes.iter().find(|s| !crate::spec::is_scope_token(s)) {
            return Err(SchemaError(format!(
                "tool `{}`: `{bad}` is not an OAuth scope: use printable ASCII characters other than space, `\"` and `\\`",
                self.spec.id
            )));
        }
        if let Some(bad) = self.spec.presentation.namespace.as_ref().filter(|n| !crate::spec::is_namespace(n)) {
            return Err(SchemaError(format!(
                "tool `{}`: `{bad}` is not a namespace: use 1 to 64 of a-z, A-Z, 0-9, `_`, `-`",
                self.spec.id
            )));
        }
        if let Some(bad) = self.spec.presentation.allowed_callers.iter().find(|c| !crate::spec::is_caller(c)) {
            return Err(SchemaError(format!(
                "tool `{}`: `{bad}` is not a caller: use `direct`, `programmatic` or `code_execution_` and a date (`code_execution_20250825`)",
                self.spec.id
            )));
        }
        // The schemas themselves are compiled by the registry, when a call of the tool first
        // needs them or when `Registry::compile_schemas` is asked: a schema that does not
        // compile refuses the tool's calls (it never runs). Checking them here would cost a
        // thousand imported tools a thousand compilations at start-up.
        schema::check_input_root(&self.spec.id, "input schema", &self.spec.schemas.input)?;
        Ok(())
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

impl super::Hints for DynamicTool {
    fn call_seen_through_context(&self) -> bool {
        true
    }
}

impl Tool for DynamicTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn shortcuts(&self) -> Option<super::Shortcuts<'_>> {
        Some(super::Shortcuts::of(self))
    }

    fn execute(
        &self,
        input: ToolInput<'_>,
        context: Arc<Map<String, Value>>,
        call: ToolCallInfo,
    ) -> BoxFuture<'static, Result<ToolOutput, ToolError>> {
        let Some(handler) = &self.handler else {
            return Box::pin(std::future::ready(Err(super::client_side_error(&self.spec.id))));
        };
        let input = match input.decode::<Value>() {
            Ok(v) => v,
            Err(e) => return Box::pin(std::future::ready(Err(decode_error(ErrorKind::InvalidInput, "the input", e)))),
        };
        let cx = ToolContext::new(RequestContext((*context).clone()), context, call);
        handler(input, cx)
    }
}
