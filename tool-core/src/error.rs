//! The tool error: the one value every failure becomes before it reaches a model.
//!
//! Owns [`ToolError`], its [`ErrorKind`] and the per-path [`Issue`]s of a validation failure.
//! It must not know how errors are produced (that is `call`) nor how they are rendered for a
//! given provider (that is the catalog/runtime layer): it is plain data with a readable
//! `Display` and a stable JSON shape.

use std::fmt;

use serde::{Deserialize, Serialize};

/// What kind of failure a [`ToolError`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// No tool with the requested id.
    UnknownTool,
    /// The arguments do not match the input schema (or do not deserialise).
    InvalidInput,
    /// The request context does not match the tool's `context` schema.
    InvalidContext,
    /// The tool returned an output that does not match its output schema.
    InvalidOutput,
    /// The arguments were refused before parsing (too large, too deep, not JSON).
    InputRejected,
    /// The tool needs approval before it runs and has none (it did not run).
    ApprovalRequired,
    /// The tool itself failed.
    Execution,
    /// The tool panicked; the panic was caught.
    Panic,
    /// The call was cancelled or timed out. Not a failure of the tool.
    Aborted,
}

impl ErrorKind {
    /// The snake_case name used in the JSON shape.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::UnknownTool => "unknown_tool",
            ErrorKind::InvalidInput => "invalid_input",
            ErrorKind::InvalidContext => "invalid_context",
            ErrorKind::InvalidOutput => "invalid_output",
            ErrorKind::InputRejected => "input_rejected",
            ErrorKind::ApprovalRequired => "approval_required",
            ErrorKind::Execution => "execution",
            ErrorKind::Panic => "panic",
            ErrorKind::Aborted => "aborted",
        }
    }
}

/// One failing location of a validated value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Issue {
    /// JSON pointer of the failing value (`""` for the root).
    pub path: String,
    /// Why it fails, worded for a model to correct it.
    pub message: String,
}

/// The error every tool failure turns into: a value a model can read and act on.
///
/// Tools return it (or any `std::error::Error`, which converts into it) from their body; the
/// registry produces it for unknown ids, invalid arguments, invalid output, panics and
/// cancellation. It never carries a Rust backtrace or a transport error.
///
/// ```
/// use tool_core::{ToolError, ErrorKind};
///
/// let e = ToolError::new("the city is not known");
/// assert_eq!(e.kind(), ErrorKind::Execution);
/// assert_eq!(e.to_string(), "the city is not known");
///
/// let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
/// let e: ToolError = io.into();
/// assert_eq!(e.message(), "no such file");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ToolError(Box<Repr>);

/// Boxed so that `Result<T, ToolError>` stays small on the hot path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Repr {
    kind: ErrorKind,
    message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tool: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    issues: Vec<Issue>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    details: Option<serde_json::Value>,
    /// Set by [`ToolError::suspended`]: not a failure but the way a tool body hands its
    /// suspension out through its `Result`. The call layer takes it out of the error path the
    /// moment the tool returns; it never travels as an error.
    #[serde(skip)]
    suspension: bool,
}

impl ToolError {
    /// An execution error with a message.
    pub fn new(message: impl Into<String>) -> Self {
        Self::with_kind(ErrorKind::Execution, message)
    }

    /// An error of a given kind.
    pub fn with_kind(kind: ErrorKind, message: impl Into<String>) -> Self {
        ToolError(Box::new(Repr {
            kind,
            message: message.into(),
            tool: None,
            issues: Vec::new(),
            details: None,
            suspension: false,
        }))
    }

    /// An execution error carrying structured details for the model.
    pub fn with_details(message: impl Into<String>, details: serde_json::Value) -> Self {
        let mut e = Self::new(message);
        e.0.details = Some(details);
        e
    }

    /// A cancelled or timed-out call.
    pub fn aborted(message: impl Into<String>) -> Self {
        Self::with_kind(ErrorKind::Aborted, message)
    }

    pub(crate) fn invalid(kind: ErrorKind, message: String, issues: Vec<Issue>) -> Self {
        let mut e = Self::with_kind(kind, message);
        e.0.issues = issues;
        e
    }

    /// The same error with another kind.
    pub fn with_kind_of(mut self, kind: ErrorKind) -> Self {
        self.0.kind = kind;
        self
    }

    /// Set the tool id this error belongs to (the registry does this for you).
    pub fn for_tool(mut self, id: impl Into<String>) -> Self {
        self.0.tool = Some(id.into());
        self
    }

    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// The model-readable message.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The tool id, when known.
    pub fn tool(&self) -> Option<&str> {
        self.0.tool.as_deref()
    }

    /// The failing paths of a validation error.
    pub fn issues(&self) -> &[Issue] {
        &self.0.issues
    }

    /// Structured details, when the tool gave some.
    pub fn details(&self) -> Option<&serde_json::Value> {
        self.0.details.as_ref()
    }

    /// A suspension carrying the tool's payload (what `ToolContext::suspend` returns for the
    /// tool body to return). It is not a failure: when the body returns it, the call ends as
    /// suspended (see `call::Finished`), not as an error.
    pub fn suspended(message: impl Into<String>, payload: serde_json::Value) -> Self {
        let mut e = Self::new(message);
        e.0.details = Some(payload);
        e.0.suspension = true;
        e
    }

    /// The payload of a suspension made by [`ToolError::suspended`], borrowed; `None` for any
    /// other error.
    pub(crate) fn suspension_payload(&self) -> Option<&serde_json::Value> {
        self.0.details.as_ref().filter(|_| self.0.suspension)
    }

    /// The payload of a suspension made by [`ToolError::suspended`]; any other error is given
    /// back.
    pub(crate) fn into_suspension(self) -> Result<serde_json::Value, ToolError> {
        if self.0.suspension {
            Ok(self.0.details.unwrap_or(serde_json::Value::Null))
        } else {
            Err(self)
        }
    }

    /// Whether the call was cancelled rather than failed.
    pub fn is_aborted(&self) -> bool {
        self.0.kind == ErrorKind::Aborted
    }

    /// The JSON shape sent back to a model: `{"error": true, "kind", "message", ...}`.
    pub fn to_json(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(self).unwrap_or_else(|_| serde_json::json!({}));
        if let Some(obj) = v.as_object_mut() {
            obj.insert("error".into(), serde_json::Value::Bool(true));
        }
        v
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)
    }
}

/// Any standard error converts into an execution [`ToolError`] carrying its message (and the
/// messages of its sources, joined by `: `).
impl<E> From<E> for ToolError
where
    E: std::error::Error + Send + Sync + 'static,
{
    fn from(err: E) -> Self {
        let mut message = err.to_string();
        let mut source = err.source();
        while let Some(s) = source {
            let text = s.to_string();
            if !message.contains(&text) {
                message.push_str(": ");
                message.push_str(&text);
            }
            source = s.source();
        }
        ToolError::new(message)
    }
}

/// The command an operator runs, as the hints in answers and errors name it (`` `toolsmith call
/// ID --approve` ``): the name the command line was run as once the command line runs in this
/// process (`my-agent` for a user's own binary), else `toolsmith`.
static OPERATOR: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// See [`OPERATOR`].
pub(crate) fn operator() -> &'static str {
    OPERATOR.get().map(String::as_str).unwrap_or("toolsmith")
}

/// Names the operator's command (kept when already set).
#[cfg_attr(not(feature = "cli"), allow(dead_code))]
pub(crate) fn set_operator(name: String) {
    let _ = OPERATOR.set(name);
}
