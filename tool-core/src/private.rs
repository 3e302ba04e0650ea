//! What `#[tool]`'s generated code uses. Not a public API: it changes without notice.
//!
//! Generated code names nothing but this module, under its versioned name
//! (`::tool_core::__private_v0_1` for every 0.1.x), so it works whatever the user has in scope
//! (or renamed), and a `tool-macros` of another version than this `tool-core` cannot compile
//! against it.

use std::fmt::Display;

pub use inventory;
pub use schemars;
pub use serde;
pub use serde_json;

pub use crate::context::{RequestContext, ToolCallInfo, ToolContext};
pub use crate::error::ToolError;
pub use crate::model_output::ModelOutput;
pub use crate::registry::ToolDef;
pub use crate::schema::{empty_object_schema, SchemaError};
pub use crate::spec::{ApprovalRule, BackgroundSpec, HookSet, McpSpec, SourceLocation, TransformPhase, TransformTarget};
pub use crate::tool::{Payload, Tool, ToolMeta, TypedTool};
pub use std::default::Default;
pub use std::future::Future;
pub use std::marker::Send;
pub use std::sync::{Arc, OnceLock};
pub use std::{concat, env, file, line, module_path, stringify, vec};
pub use std::{option::Option, result::Result, string::String, vec::Vec};

// The module's name carries the version (see the module docs); renaming it is part of a
// version bump, and this fails to compile until it is done.
const _: () = assert!(
    same_str(
        module_path!(),
        concat!(
            "tool_core::__private_v",
            env!("CARGO_PKG_VERSION_MAJOR"),
            "_",
            env!("CARGO_PKG_VERSION_MINOR")
        ),
    ),
    "rename `__private_v…` in tool-core's lib.rs to `__private_v{{MAJOR}}_{{MINOR}}` of the crate's version"
);

const fn same_str(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Payload type of a tool with no `suspend`/`resume` type.
pub type NoPayload = ();

/// A tool body's `Result<Output, E>` return type, split into its parts. Implemented for every
/// `Result` so that `Output` is always known; `E` is checked by [`tool_result`], where a wrong
/// error type is reported once, with [`IntoToolError`]'s message.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a `std::result::Result`: a `#[tool]` whose return type is named `Result` must return `Result<T, E>`",
    label = "this return type is not a `Result<T, E>`"
)]
pub trait IntoToolResult {
    /// The output type.
    type Output;
    /// The error type.
    type Error;
    /// The result itself.
    fn into_result(self) -> Result<Self::Output, Self::Error>;
}

impl<T, E> IntoToolResult for Result<T, E> {
    type Output = T;
    type Error = E;
    fn into_result(self) -> Result<T, E> {
        self
    }
}

/// The error type of a tool returning `Result<T, E>`: anything `Into<ToolError>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the error type of a `#[tool]`: it does not convert into `ToolError`",
    label = "the error type of this `Result` does not convert into `ToolError`",
    note = "use `ToolError`, any `std::error::Error + Send + Sync + 'static`, or convert it in the body: `.map_err(|e| ToolError::new(e.to_string()))`"
)]
pub trait IntoToolError {
    /// Converts.
    fn into_tool_error(self) -> ToolError;
}

impl<E: Into<ToolError>> IntoToolError for E {
    fn into_tool_error(self) -> ToolError {
        self.into()
    }
}

/// Converts a tool body's `Result<T, E>` into the tool's result.
pub fn tool_result<R: IntoToolResult>(r: R) -> Result<R::Output, ToolError>
where
    R::Error: IntoToolError,
{
    r.into_result().map_err(IntoToolError::into_tool_error)
}

/// What a transform may return.
#[diagnostic::on_unimplemented(
    message = "a transform must return `serde_json::Value`, `Option<Value>` or `Result<Value, E>`; found `{Self}`",
    label = "this transform's return type is not supported"
)]
pub trait TransformReturn {
    /// Converts (`None` = yielded nothing).
    fn into_transformed(self) -> Option<Result<serde_json::Value, String>>;
}

impl TransformReturn for serde_json::Value {
    fn into_transformed(self) -> Option<Result<serde_json::Value, String>> {
        Some(Ok(self))
    }
}

impl TransformReturn for Option<serde_json::Value> {
    fn into_transformed(self) -> Option<Result<serde_json::Value, String>> {
        self.map(Ok)
    }
}

impl<E: Display> TransformReturn for Result<serde_json::Value, E> {
    fn into_transformed(self) -> Option<Result<serde_json::Value, String>> {
        Some(self.map_err(|e| e.to_string()))
    }
}

/// What a lifecycle hook may return.
#[diagnostic::on_unimplemented(
    message = "a lifecycle hook must return `()` or `Result<(), E>`; found `{Self}`",
    label = "this hook's return type is not supported"
)]
pub trait HookReturn {
    /// Converts.
    fn into_hook_result(self) -> Result<(), String>;
}

impl HookReturn for () {
    fn into_hook_result(self) -> Result<(), String> {
        Ok(())
    }
}

impl<E: Display> HookReturn for Result<(), E> {
    fn into_hook_result(self) -> Result<(), String> {
        self.map_err(|e| e.to_string())
    }
}

/// What an approval predicate may return.
#[diagnostic::on_unimplemented(
    message = "a `require_approval` predicate must return `bool` or `Result<bool, E>`; found `{Self}`",
    label = "this predicate's return type is not supported"
)]
pub trait ApprovalReturn {
    /// Converts (`Err` = approval required).
    fn into_approval(self) -> Result<bool, String>;
}

impl ApprovalReturn for bool {
    fn into_approval(self) -> Result<bool, String> {
        Ok(self)
    }
}

impl<E: Display> ApprovalReturn for Result<bool, E> {
    fn into_approval(self) -> Result<bool, String> {
        self.map_err(|e| e.to_string())
    }
}

/// A `to_model_output` function's return.
#[diagnostic::on_unimplemented(
    message = "`to_model_output` must return `ModelOutput` or `Option<ModelOutput>`; found `{Self}`",
    label = "this return type is not supported"
)]
pub trait ModelOutputReturn {
    /// Converts.
    fn into_model_output(self) -> Option<ModelOutput>;
}

impl ModelOutputReturn for ModelOutput {
    fn into_model_output(self) -> Option<ModelOutput> {
        Some(self)
    }
}

impl ModelOutputReturn for Option<ModelOutput> {
    fn into_model_output(self) -> Option<ModelOutput> {
        self
    }
}

/// A type named in `suspend = T` / `resume = T` / `context = T` must have a schema.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no JSON Schema: `suspend`, `resume` and `context` types must derive `schemars::JsonSchema`",
    label = "add `#[derive(JsonSchema)]` to this type"
)]
pub trait HasSchema {}
impl<T: schemars::JsonSchema + ?Sized> HasSchema for T {}

/// Asserts at compile time that a payload type has a schema.
pub const fn assert_schema<T: HasSchema + ?Sized>() {}

/// Serialises an attribute expression (`meta = …`, `provider_options(x = …)`) to JSON.
pub fn to_json<T: serde::Serialize>(value: T) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}

/// Serialises the typed input examples.
pub fn examples<T: serde::Serialize>(values: Vec<T>) -> Vec<serde_json::Value> {
    values.iter().map(to_json).collect()
}

/// Runs a `to_model_output` function.
pub fn model_output<R: ModelOutputReturn>(r: R) -> Option<ModelOutput> {
    r.into_model_output()
}

/// Runs a transform function.
pub fn transformed<R: TransformReturn>(r: R) -> Option<Result<serde_json::Value, String>> {
    r.into_transformed()
}

/// Runs a hook function.
pub fn hook<R: HookReturn>(r: R) -> Result<(), String> {
    r.into_hook_result()
}

/// Runs an approval predicate.
pub fn approval<R: ApprovalReturn>(r: R) -> Result<bool, String> {
    r.into_approval()
}

/// Wraps a plain output as a successful result.
pub fn ok<T>(value: T) -> Result<T, ToolError> {
    Ok(value)
}

/// The `#[ctx]` parameter's type: a [`ToolContext<C>`]; `C` is the tool's request-context type
/// unless `context = T` says otherwise.
#[diagnostic::on_unimplemented(
    message = "the `#[ctx]` parameter must be a `ToolContext<C>`; found `{Self}`",
    label = "not a `ToolContext`",
    note = "write `#[ctx] cx: ToolContext` (untyped request context) or `#[ctx] cx: ToolContext<MyContext>`"
)]
pub trait ContextParam {
    /// The request-context type.
    type Context;
}

impl<C> ContextParam for ToolContext<C> {
    type Context = C;
}
