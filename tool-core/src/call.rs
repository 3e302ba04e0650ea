//! Calling a tool: limits, validation with forgiveness, redaction, panics, cancellation.
//!
//! Owns [`CallOptions`], [`CallArgs`], [`Limits`], the compiled validators of one tool and the
//! path from raw arguments to a [`ToolOutput`] or a model-readable [`ToolError`]. It never
//! decides which tool runs (that is `registry`) and never formats for a provider.

use std::any::Any;
use std::borrow::Cow;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use jsonschema::Validator;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::context::{McpHandle, ToolCallInfo, Workflow, Writer};
use crate::error::{ErrorKind, Issue, ToolError};
use crate::json::{Borrowed, Node};
use crate::schema::SchemaError;
use crate::tool::{Tool, ToolInput, ToolOutput};

/// Arguments of a call: JSON text as a model sent it, or an already-parsed value.
#[derive(Debug, Clone)]
pub enum CallArgs<'a> {
    /// JSON text (checked against the size and depth limits before it is parsed).
    Text(Cow<'a, str>),
    /// A parsed value.
    Value(Value),
}

impl<'a> From<&'a str> for CallArgs<'a> {
    fn from(s: &'a str) -> Self {
        CallArgs::Text(Cow::Borrowed(s))
    }
}

impl<'a> From<&'a String> for CallArgs<'a> {
    fn from(s: &'a String) -> Self {
        CallArgs::Text(Cow::Borrowed(s))
    }
}

impl From<String> for CallArgs<'_> {
    fn from(s: String) -> Self {
        CallArgs::Text(Cow::Owned(s))
    }
}

impl From<Value> for CallArgs<'_> {
    fn from(v: Value) -> Self {
        CallArgs::Value(v)
    }
}

/// Per-call options.
#[derive(Debug, Clone, Default)]
pub struct CallOptions {
    /// The request context (a JSON object); validated when the tool declares `context = T`.
    pub context: Option<Value>,
    /// The provider's id for this call; generated when absent.
    pub tool_call_id: Option<String>,
    /// Conversation messages, passed to the context and hooks.
    pub messages: Vec<Value>,
    /// Cancels the call; a cancelled call ends as [`ErrorKind::Aborted`].
    pub cancellation: Option<CancellationToken>,
    /// Ends the call as [`ErrorKind::Aborted`] after this long.
    pub timeout: Option<Duration>,
    /// The conversation thread.
    pub thread_id: Option<String>,
    /// The resource (user) the call acts for.
    pub resource_id: Option<String>,
    /// Resume data for a call that continues (the runtime sets it after validating it).
    pub resume_data: Option<Value>,
    /// Where the tool's custom chunks go.
    pub writer: Writer,
    /// The workflow running the call.
    pub workflow: Option<Workflow>,
    /// The MCP client that asked for the call.
    pub mcp: Option<Arc<dyn McpHandle>>,
    /// Tunes the background settings of a tool that opted in (runtime calls only; ignored for
    /// tools that did not opt in).
    pub background: Option<crate::runtime::BackgroundOverride>,
}

impl CallOptions {
    /// Options with a request context.
    pub fn with_context(context: Value) -> Self {
        CallOptions {
            context: Some(context),
            ..Self::default()
        }
    }
}

/// Limits applied to arguments before they are parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest accepted argument document, in bytes (default 1 MiB).
    pub max_input_bytes: usize,
    /// Deepest accepted nesting of arrays and objects (default 64).
    pub max_depth: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_input_bytes: 1 << 20,
            max_depth: 64,
        }
    }
}

/// The validators of one tool, compiled once when it enters a registry.
pub(crate) struct Compiled {
    input: Validator,
    input_fast: Validator<Borrowed>,
    output: Option<Validator>,
    output_fast: Option<Validator<Borrowed>>,
    context: Option<Validator>,
    suspend: Option<Validator>,
    resume: Option<Validator>,
}

impl Compiled {
    pub(crate) fn new(tool: &dyn Tool) -> Result<Self, SchemaError> {
        let spec = tool.spec();
        let compile = |what: &str, schema: &Value| {
            jsonschema::validator_for(schema)
                .map_err(|e| SchemaError(format!("tool `{}`: the {what} schema does not compile: {e}", spec.id)))
        };
        let fast = |what: &str, schema: &Value| {
            jsonschema::options_for::<Borrowed>()
                .build(schema)
                .map_err(|e| SchemaError(format!("tool `{}`: the {what} schema does not compile: {e}", spec.id)))
        };
        Ok(Compiled {
            input: compile("input", &spec.input_schema)?,
            input_fast: fast("input", &spec.input_schema)?,
            output: spec.output_schema.as_ref().map(|s| compile("output", s)).transpose()?,
            output_fast: spec.output_schema.as_ref().map(|s| fast("output", s)).transpose()?,
            context: spec
                .request_context_schema
                .as_ref()
                .map(|s| compile("request-context", s))
                .transpose()?,
            suspend: spec.suspend_schema.as_ref().map(|s| compile("suspend", s)).transpose()?,
            resume: spec.resume_schema.as_ref().map(|s| compile("resume", s)).transpose()?,
        })
    }
}

const QUOTE_LIMIT: usize = 200;
const REDACTED: &str = "[REDACTED]";
const SECRET_MARKERS: [&str; 7] = ["password", "secret", "token", "apikey", "api_key", "auth", "credential"];

/// Whether a key names a secret (password, secret, token, apiKey, api_key, auth, credential; any case).
pub fn is_secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    SECRET_MARKERS.iter().any(|m| key.contains(m))
}

/// A copy of `value` with every secret-named key's value replaced by `[REDACTED]`.
///
/// ```
/// let v = serde_json::json!({"user": "ann", "apiKey": "k-123", "nested": {"Auth_Header": "x"}});
/// let r = tool_core::call::redact(&v);
/// assert_eq!(r["user"], "ann");
/// assert_eq!(r["apiKey"], "[REDACTED]");
/// assert_eq!(r["nested"]["Auth_Header"], "[REDACTED]");
/// ```
pub fn redact(value: &Value) -> Value {
    match value {
        Value::Object(obj) => Value::Object(
            obj.iter()
                .map(|(k, v)| {
                    let v = if is_secret_key(k) {
                        Value::String(REDACTED.into())
                    } else {
                        redact(v)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redact).collect()),
        other => other.clone(),
    }
}

fn path_has_secret(path: &str) -> bool {
    path.split('/').any(is_secret_key)
}

/// Quotes a value for an error message: redacted, compact, at most 200 characters.
pub(crate) fn quote(value: &Value) -> String {
    truncate(&redact(value).to_string(), QUOTE_LIMIT)
}

/// Quotes text that is not JSON: its keys cannot be redacted, so text that mentions a
/// secret-named key is not quoted at all.
fn quote_text(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    if SECRET_MARKERS.iter().any(|m| lower.contains(m)) {
        format!("({} characters, not shown: they mention a secret-named key)", text.chars().count())
    } else {
        truncate(text, QUOTE_LIMIT)
    }
}

fn truncate(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}… ({} characters in all)", &text[..cut], text.chars().count()),
    }
}

fn rejected(tool: &str, message: String) -> ToolError {
    ToolError::with_kind(ErrorKind::InputRejected, format!("Tool `{tool}` refused its arguments: {message}")).for_tool(tool)
}

/// Refuses arguments past the size and depth limits, before any parsing.
pub(crate) fn check_limits(tool: &str, args: &CallArgs<'_>, limits: &Limits) -> Result<(), ToolError> {
    let (size, too_deep) = match args {
        CallArgs::Text(text) => (text.len(), text_depth_exceeds(text.as_bytes(), limits.max_depth).is_some()),
        CallArgs::Value(value) => (serialized_len(value), value_depth(value) > limits.max_depth),
    };
    if size > limits.max_input_bytes {
        return Err(rejected(
            tool,
            format!("they are {size} bytes, more than the limit of {} bytes", limits.max_input_bytes),
        ));
    }
    if too_deep {
        return Err(rejected(
            tool,
            format!(
                "they nest deeper than the limit of {} levels (the limit is {})",
                limits.max_depth, limits.max_depth
            ),
        ));
    }
    Ok(())
}

fn parse_value(tool: &str, text: &str) -> Result<Value, ToolError> {
    serde_json::from_str(text).map_err(|e| {
        ToolError::invalid(
            ErrorKind::InvalidInput,
            format!(
                "Tool `{tool}` received arguments that are not valid JSON ({e}). Provided arguments: {}",
                quote_text(text)
            ),
            vec![Issue {
                path: String::new(),
                message: e.to_string(),
            }],
        )
        .for_tool(tool)
    })
}

/// Input after validation: the argument text itself when it was valid as sent, or a value.
pub(crate) enum Validated<'a> {
    Text(&'a str),
    Value(Value),
}

impl Validated<'_> {
    pub(crate) fn as_input(&self) -> ToolInput<'_> {
        match self {
            Validated::Text(t) => ToolInput::Text(t),
            Validated::Value(v) => ToolInput::Value(v),
        }
    }
}

/// Validates arguments: text is checked on a borrowed tree and, when valid, handed on as is;
/// anything else goes through the value path, which repairs what it can and explains the rest.
pub(crate) fn validate_args<'a>(tool: &str, compiled: &Compiled, args: &'a CallArgs<'_>) -> Result<Validated<'a>, ToolError> {
    match args {
        CallArgs::Text(text) => {
            let text = text.trim();
            if text.is_empty() || text == "null" {
                return validate_input(tool, compiled, Value::Null).map(Validated::Value);
            }
            if let Ok(tree) = Node::parse(text) {
                if compiled.input_fast.is_valid(&tree) {
                    return Ok(Validated::Text(text));
                }
            }
            validate_input(tool, compiled, parse_value(tool, text)?).map(Validated::Value)
        }
        CallArgs::Value(value) => validate_input(tool, compiled, value.clone()).map(Validated::Value),
    }
}

/// Scans JSON text for nesting past `max` without parsing it; returns the depth reached.
fn text_depth_exceeds(bytes: &[u8], max: usize) -> Option<usize> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for &b in bytes {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return Some(depth);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

fn value_depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(value_depth).max().unwrap_or(0),
        Value::Object(obj) => 1 + obj.values().map(value_depth).max().unwrap_or(0),
        _ => 0,
    }
}

fn serialized_len(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

fn issues_of(validator: &Validator, value: &Value, mask: bool) -> Vec<Issue> {
    validator
        .iter_errors(value)
        .map(|e| {
            let path = e.instance_path().as_str().to_owned();
            let message = if mask || path_has_secret(&path) {
                e.masked_with(REDACTED).to_string()
            } else {
                e.to_string()
            };
            Issue { path, message }
        })
        .collect()
}

/// Repairs what models commonly get wrong, guided by the validation errors: an object or
/// array sent as a JSON string is parsed; a `null` for a field is dropped (absent).
fn forgive(value: &mut Value, validator: &Validator) -> bool {
    let paths: Vec<String> = validator
        .iter_errors(value)
        .map(|e| e.instance_path().as_str().to_owned())
        .collect();
    let mut changed = false;
    for path in paths {
        if path.is_empty() {
            continue;
        }
        match value.pointer(&path) {
            Some(Value::String(s)) => {
                let t = s.trim_start();
                if t.starts_with('{') || t.starts_with('[') {
                    if let Ok(parsed @ (Value::Object(_) | Value::Array(_))) = serde_json::from_str::<Value>(s) {
                        if let Some(slot) = value.pointer_mut(&path) {
                            *slot = parsed;
                            changed = true;
                        }
                    }
                }
            }
            Some(Value::Null) => {
                let (parent, key) = path.rsplit_once('/').unwrap_or(("", &path));
                if let Some(Value::Object(obj)) = value.pointer_mut(parent) {
                    let key = key.replace("~1", "/").replace("~0", "~");
                    changed |= obj.remove(&key).is_some();
                }
            }
            _ => {}
        }
    }
    changed
}

/// Removes every `null` member of every object (a strict-mode `null` means "absent").
fn drop_nulls(value: &mut Value) -> bool {
    match value {
        Value::Object(obj) => {
            let before = obj.len();
            obj.retain(|_, v| !v.is_null());
            let mut changed = obj.len() != before;
            for v in obj.values_mut() {
                changed |= drop_nulls(v);
            }
            changed
        }
        Value::Array(items) => items.iter_mut().fold(false, |changed, v| drop_nulls(v) | changed),
        _ => false,
    }
}

/// Parses every string that holds a JSON object or array (a structure sent as a string).
fn parse_json_strings(value: &mut Value) -> bool {
    match value {
        Value::String(s) => {
            let t = s.trim_start();
            if !(t.starts_with('{') || t.starts_with('[')) {
                return false;
            }
            match serde_json::from_str::<Value>(s) {
                Ok(parsed @ (Value::Object(_) | Value::Array(_))) => {
                    *value = parsed;
                    true
                }
                _ => false,
            }
        }
        Value::Object(obj) => obj.values_mut().fold(false, |changed, v| parse_json_strings(v) | changed),
        Value::Array(items) => items.iter_mut().fold(false, |changed, v| parse_json_strings(v) | changed),
        _ => false,
    }
}

fn format_issues(issues: &[Issue]) -> String {
    issues
        .iter()
        .map(|i| format!("\n- {}: {}", if i.path.is_empty() { "(root)" } else { &i.path }, i.message))
        .collect()
}

/// Validates (and if needed repairs) arguments; the error names every failing path.
pub(crate) fn validate_input(tool: &str, compiled: &Compiled, mut value: Value) -> Result<Value, ToolError> {
    if value.is_null() {
        value = Value::Object(Map::new());
    }
    if compiled.input.is_valid(&value) {
        return Ok(value);
    }
    let original = issues_of(&compiled.input, &value, false);
    let provided = quote(&value);
    let mut repaired = value;
    for _ in 0..4 {
        if !forgive(&mut repaired, &compiled.input) {
            break;
        }
        if compiled.input.is_valid(&repaired) {
            return Ok(repaired);
        }
    }
    // A failure inside a union (`anyOf` of an optional struct) reports the union's path, not
    // the field's: as a last resort, repair the whole document and keep it only if it is valid.
    for deep in [drop_nulls as fn(&mut Value) -> bool, parse_json_strings] {
        if deep(&mut repaired) && compiled.input.is_valid(&repaired) {
            return Ok(repaired);
        }
    }
    Err(ToolError::invalid(
        ErrorKind::InvalidInput,
        format!(
            "Tool `{tool}` received invalid arguments:{}\nProvided arguments: {provided}",
            format_issues(&original)
        ),
        original,
    )
    .for_tool(tool))
}

/// Validates the request context; values are never quoted unredacted.
pub(crate) fn validate_context(tool: &str, compiled: &Compiled, context: Option<Value>) -> Result<Map<String, Value>, ToolError> {
    let value = match context {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(v) => v,
    };
    if let Some(validator) = &compiled.context {
        if !validator.is_valid(&value) {
            let issues = issues_of(validator, &value, true);
            return Err(ToolError::invalid(
                ErrorKind::InvalidContext,
                format!(
                    "Tool `{tool}` received an invalid request context:{}\nProvided context: {}",
                    format_issues(&issues),
                    quote(&value)
                ),
                issues,
            )
            .for_tool(tool));
        }
    }
    match value {
        Value::Object(map) => Ok(map),
        other => Err(ToolError::with_kind(
            ErrorKind::InvalidContext,
            format!("Tool `{tool}`: the request context must be a JSON object, got {}", quote(&other)),
        )
        .for_tool(tool)),
    }
}

/// Checks a suspension's payload against the tool's `suspend` schema; a payload that does not
/// match turns the suspension into an output error (the tool broke its own contract).
pub(crate) fn validate_suspension(tool: &str, compiled: &Compiled, error: ToolError) -> ToolError {
    let (Some(validator), true) = (&compiled.suspend, error.is_suspended()) else {
        return error;
    };
    let payload = error.details().cloned().unwrap_or(Value::Null);
    if validator.is_valid(&payload) {
        return error;
    }
    let issues = issues_of(validator, &payload, false);
    ToolError::invalid(
        ErrorKind::InvalidOutput,
        format!(
            "Tool `{tool}` suspended with a payload that does not match its suspend schema:{}",
            format_issues(&issues)
        ),
        issues,
    )
    .for_tool(tool)
}

/// Checks resume data against the tool's `resume` schema (any value when it declares none).
pub(crate) fn validate_resume(tool: &str, compiled: &Compiled, data: &Value) -> Result<(), ToolError> {
    let Some(validator) = &compiled.resume else {
        return Ok(());
    };
    if validator.is_valid(data) {
        return Ok(());
    }
    let issues = issues_of(validator, data, true);
    Err(ToolError::invalid(
        ErrorKind::InvalidInput,
        format!(
            "The resume data for tool `{tool}` does not match its resume schema:{}\nProvided data: {}",
            format_issues(&issues),
            quote(data)
        ),
        issues,
    )
    .for_tool(tool))
}

pub(crate) fn validate_output(tool: &str, compiled: &Compiled, output: &RawValue) -> Result<(), ToolError> {
    let (Some(fast), Some(validator)) = (&compiled.output_fast, &compiled.output) else {
        return Ok(());
    };
    if Node::parse(output.get()).is_ok_and(|tree| fast.is_valid(&tree)) {
        return Ok(());
    }
    let value: Value = serde_json::from_str(output.get()).unwrap_or(Value::Null);
    let issues = issues_of(validator, &value, false);
    Err(ToolError::invalid(
        ErrorKind::InvalidOutput,
        format!(
            "Tool `{tool}` returned output that does not match its output schema:{}",
            format_issues(&issues)
        ),
        issues,
    )
    .for_tool(tool))
}

/// The text of a caught panic payload.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-text panic payload".to_owned())
}

/// Runs a synchronous user function (hook, predicate, transform), turning a panic into `Err`.
pub(crate) fn catch_panic<R>(f: impl FnOnce() -> R) -> Result<R, String> {
    std::panic::catch_unwind(AssertUnwindSafe(f)).map_err(|p| format!("panicked: {}", panic_message(&*p)))
}

/// The shared empty request context (most calls have none).
fn empty_context() -> Arc<Map<String, Value>> {
    static EMPTY: std::sync::OnceLock<Arc<Map<String, Value>>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| Arc::new(Map::new())).clone()
}

static CALL_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh call id: a per-process random prefix and a counter (`call_<16 hex>`).
pub(crate) fn new_call_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    static PREFIX: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let prefix = *PREFIX.get_or_init(|| std::collections::hash_map::RandomState::new().build_hasher().finish());
    let n = prefix.wrapping_add(CALL_COUNTER.fetch_add(1, Ordering::Relaxed).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut id = String::with_capacity(21);
    id.push_str("call_");
    for shift in (0..16).rev() {
        id.push(HEX[((n >> (shift * 4)) & 0xf) as usize] as char);
    }
    id
}

/// Runs a tool's future with panic catching, cancellation and the timeout.
pub(crate) async fn run(
    tool: &Arc<dyn Tool>,
    input: ToolInput<'_>,
    context: Map<String, Value>,
    options: CallOptions,
) -> Result<ToolOutput, ToolError> {
    let id = tool.spec().id.as_str();
    let watched = options.cancellation.is_some() || options.timeout.is_some();
    let cancellation = options.cancellation.unwrap_or_default();
    if cancellation.is_cancelled() {
        return Err(ToolError::aborted(format!("Tool `{id}` was cancelled before it started")).for_tool(id));
    }
    let call = ToolCallInfo {
        tool_call_id: options.tool_call_id.unwrap_or_else(new_call_id),
        tool_name: tool.spec().id.clone(),
        messages: options.messages,
        cancellation: cancellation.clone(),
        thread_id: options.thread_id,
        resource_id: options.resource_id,
        resume_data: options.resume_data,
        writer: options.writer,
        workflow: options.workflow,
        mcp: options.mcp,
    };
    let panicked = |payload: &(dyn Any + Send)| {
        ToolError::with_kind(
            ErrorKind::Panic,
            format!("Tool `{id}` failed: it panicked ({})", panic_message(payload)),
        )
    };
    // Decoding the input and creating the future run synchronously: catch a panic there too.
    let context = if context.is_empty() { empty_context() } else { Arc::new(context) };
    let fut = match std::panic::catch_unwind(AssertUnwindSafe(|| tool.execute(input, context, call))) {
        Ok(fut) => AssertUnwindSafe(fut).catch_unwind(),
        Err(payload) => return Err(panicked(&*payload).for_tool(id)),
    };
    let result = if watched {
        Box::pin(watch(id, fut, &cancellation, options.timeout)).await
    } else {
        fut.await.unwrap_or_else(|payload| Err(panicked(&*payload)))
    };
    result.map_err(|e| if e.tool().is_none() { e.for_tool(id) } else { e })
}

/// Races a running tool against its cancellation and timeout. Only calls that have either pay
/// for it (boxed, so the common path's future stays small).
async fn watch(
    id: &str,
    fut: impl Future<Output = std::thread::Result<Result<ToolOutput, ToolError>>>,
    cancellation: &CancellationToken,
    timeout: Option<Duration>,
) -> Result<ToolOutput, ToolError> {
    let expiry = async {
        match timeout {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    // The tool is polled first, so a tool that finishes at once never registers a waiter on the
    // cancellation token.
    tokio::select! {
        biased;
        r = fut => match r {
            Err(payload) => Err(ToolError::with_kind(ErrorKind::Panic, format!("Tool `{id}` failed: it panicked ({})", panic_message(&*payload)))),
            // A tool that gave up because it saw the cancellation was aborted, not failed.
            Ok(Err(e)) if cancellation.is_cancelled() && !e.is_aborted() => Err(ToolError::aborted(format!("Tool `{id}` was cancelled ({})", e.message()))),
            Ok(r) => r,
        },
        _ = cancellation.cancelled() => Err(ToolError::aborted(format!("Tool `{id}` was cancelled"))),
        _ = expiry => {
            cancellation.cancel();
            Err(ToolError::aborted(format!("Tool `{id}` timed out after {} ms", timeout.map_or(0, |d| d.as_millis()))))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn depth_scan_ignores_brackets_inside_strings() {
        assert_eq!(text_depth_exceeds(br#"{"a": "[[[[[[[[["}"#, 2), None);
        assert_eq!(text_depth_exceeds(br#"{"a": "\"[[[", "b": [[1]]}"#, 2), Some(3));
        assert_eq!(text_depth_exceeds(b"[[[]]]", 3), None);
    }

    #[test]
    fn truncation_is_char_safe_and_says_how_long() {
        let long = "é".repeat(300);
        let t = truncate(&long, 200);
        assert!(t.starts_with(&"é".repeat(200)));
        assert!(t.contains("300 characters"));
        assert_eq!(truncate("short", 200), "short");
    }

    #[test]
    fn value_limits() {
        let mut deep = json!(1);
        for _ in 0..70 {
            deep = json!([deep]);
        }
        let err = check_limits("t", &CallArgs::Value(deep), &Limits::default()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InputRejected);
        let big = json!({"s": "x".repeat(2 << 20)});
        let err = check_limits("t", &CallArgs::Value(big), &Limits::default()).unwrap_err();
        assert!(err.message().contains("bytes"), "{err}");
    }

    #[test]
    fn secret_keys() {
        for k in [
            "password",
            "clientSecret",
            "ACCESS_TOKEN",
            "apiKey",
            "x_api_key",
            "Authorization",
            "credentials",
        ] {
            assert!(is_secret_key(k), "{k}");
        }
        for k in ["user", "city", "limit"] {
            assert!(!is_secret_key(k), "{k}");
        }
    }
}
