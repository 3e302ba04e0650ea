//! What `#[tool]`'s generated code uses. Not a public API: it changes without notice.
//!
//! Generated code names nothing but this module, under its versioned name
//! (`::tool_core::__private_v0_1` for every 0.1.x), so it works whatever the user has in scope
//! (or renamed), and a `tool-macros` of another version than this `tool-core` cannot compile
//! against it. What a tool's types are is decided here, by trait, never by their spelling:
//! `Probe` answers "is this a `Result`?", "is this a plain value?" and "is this a
//! `ToolContext`?", `Shape` turns the answer into the tool's `Input`, `Output` and `Context`
//! types and the way the function receives its parameters.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet, VecDeque};
use std::fmt::Display;
use std::marker::PhantomData;
use std::num::{
    NonZeroI8, NonZeroI16, NonZeroI32, NonZeroI64, NonZeroI128, NonZeroIsize, NonZeroU8, NonZeroU16, NonZeroU32, NonZeroU64, NonZeroU128,
    NonZeroUsize,
};
use std::path::PathBuf;

#[path = "private/one_field.rs"]
pub mod one_field;
#[path = "private/shared.rs"]
mod shared;

pub use inventory;
pub use schemars;
pub use serde;
pub use serde_json;

pub use crate::Caller;
pub use crate::context::{RequestContext, ToolCallInfo, ToolContext};
pub use crate::error::ToolError;
pub use crate::model_output::ModelOutput;
pub use crate::registry::ToolDef;
pub use crate::schema::{SchemaError, empty_object_schema};
pub use crate::spec::{
    ApprovalRule, BackgroundSpec, Behaviour, CallBehavior, HookSet, Idempotent, Isolation, McpSpec, Policy, Presentation, SourceLocation,
    TransformPhase, TransformTarget,
};
pub use crate::tool::{Payload, Tool, ToolMeta, TypedTool};
pub use one_field::{NoParams, OneField};
pub use shared::{Returning, registered, returning, source};
pub use std::borrow::Cow;
pub use std::default::Default;
pub use std::future::{Future, ready};
pub use std::marker::Send;
pub use std::sync::{Arc, OnceLock};
pub use std::{assert, concat, env, file, line, module_path, stringify, vec};
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

/// Payload type of a tool with no `suspend`/`resume` type: untyped (and no schema published).
pub type NoPayload = serde_json::Value;

/// Stands in for a value in the stubs `#[tool]` emits beside its errors (so that code naming
/// the tool still resolves); those never compile, so it is never called.
pub fn stub<T>() -> T {
    unreachable!("a `#[tool]` with errors does not compile")
}

/// Asks what a type is, by trait: `Probe::<T>::IS_RESULT` is `true` when `T` is a `Result`,
/// `IS_PLAIN` when it is a [`PlainValue`], `IS_CONTEXT` when it is a `ToolContext`. Each is an
/// inherent constant where that holds and [`ProbeFallback`]'s `false` otherwise (inherent
/// items win over trait items for a concrete type), so an alias answers like the type it names.
pub struct Probe<T: ?Sized>(PhantomData<T>);

impl<T, E> Probe<Result<T, E>> {
    /// `T` is a `Result`.
    pub const IS_RESULT: bool = true;
}

impl<C, S, R> Probe<ToolContext<C, S, R>> {
    /// `T` is a `ToolContext`.
    pub const IS_CONTEXT: bool = true;
}

impl<T: PlainValue + ?Sized> Probe<T> {
    /// `T` is a plain value.
    pub const IS_PLAIN: bool = true;

    /// Whether a plain value is left out of a serialised example (`None`).
    pub fn is_absent(value: &T) -> bool {
        value.is_absent()
    }
}

impl<T: PlainDecode + ?Sized> Probe<T> {
    /// `T` decodes exactly what its derived schema accepts (see [`PlainDecode`]).
    pub const DECODES_PLAIN: bool = true;
}

impl<T: PlainEncode + ?Sized> Probe<T> {
    /// `T` encodes only what its derived schema accepts (see [`PlainEncode`]).
    pub const ENCODES_PLAIN: bool = true;
}

/// The answers of [`Probe`] where its inherent items do not apply. Generated code brings it
/// into scope (`use …::ProbeFallback as _;`).
pub trait ProbeFallback {
    /// The probed type.
    type Of: ?Sized;
    /// Not a `Result`.
    const IS_RESULT: bool = false;
    /// Not a plain value.
    const IS_PLAIN: bool = false;
    /// Not a `ToolContext`.
    const IS_CONTEXT: bool = false;
    /// Not known to decode exactly what its schema accepts: the tool keeps validating.
    const DECODES_PLAIN: bool = false;
    /// Not known to encode only what its schema accepts: its outputs keep being checked.
    const ENCODES_PLAIN: bool = false;
    /// Never left out of a serialised example.
    fn is_absent(value: &Self::Of) -> bool {
        let _ = value;
        false
    }
}

impl<T: ?Sized> ProbeFallback for Probe<T> {
    type Of = T;
}

/// A value that is one field of a tool's input, never the whole input: a single parameter of
/// such a type is a field (`fn square(x: f64)` takes `{"x": …}`), any other single parameter
/// is the whole input. Scalars, strings, collections, maps, `Option`, `Box`, tuples, arrays,
/// `serde_json::Value`, `PathBuf`; an alias of one of them is one of them.
pub trait PlainValue {
    /// Whether the value is left out of a serialised example (`None`).
    fn is_absent(&self) -> bool {
        false
    }
}

macro_rules! plain_values {
    ($($ty:ty),* $(,)?) => { $(impl PlainValue for $ty {})* };
}

plain_values!(
    bool,
    char,
    String,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    f32,
    f64,
    NonZeroI8,
    NonZeroI16,
    NonZeroI32,
    NonZeroI64,
    NonZeroI128,
    NonZeroIsize,
    NonZeroU8,
    NonZeroU16,
    NonZeroU32,
    NonZeroU64,
    NonZeroU128,
    NonZeroUsize,
    PathBuf,
    serde_json::Value,
    (),
);

impl<T> PlainValue for Option<T> {
    fn is_absent(&self) -> bool {
        self.is_none()
    }
}
impl<T: ?Sized> PlainValue for Box<T> {}
impl<T> PlainValue for Vec<T> {}
impl<T> PlainValue for VecDeque<T> {}
impl<T> PlainValue for BTreeSet<T> {}
impl<T, S> PlainValue for HashSet<T, S> {}
impl<K, V> PlainValue for BTreeMap<K, V> {}
impl<K, V, S> PlainValue for HashMap<K, V, S> {}
impl<T, const N: usize> PlainValue for [T; N] {}

macro_rules! plain_tuples {
    ($(($($t:ident),+))*) => { $(impl<$($t),+> PlainValue for ($($t,)+) {})* };
}

plain_tuples!((A)(A, B)(A, B, C)(A, B, C, D)(A, B, C, D, E)(A, B, C, D, E, F)(A, B, C, D, E, F, G)(A, B, C, D, E, F, G, H));

mod sealed {
    /// Only tool-core implements [`super::PlainDecode`].
    pub trait Sealed {}
}

/// A type whose serde `Deserialize` accepts no value its schemars `JsonSchema` refuses: the
/// std types whose derived schema is read from the same shape serde decodes (strings,
/// booleans, integers up to 64 bits, floats, `Option`, `Vec`, `VecDeque`, `Box`, maps with
/// string keys, `serde_json::Value`, `PathBuf`). Sealed: a type with its own `Deserialize` or
/// `JsonSchema` (a newtype with a pattern, `alias`, `with`, `default`, `flatten`…) cannot
/// claim it. `#[tool]` asks it (through [`Probe`]) of every field of the input struct it
/// generates; only when every field answers yes may a registry skip the input validator for
/// arguments that decode, and then only if the schema's keywords say nothing more either.
pub trait PlainDecode: sealed::Sealed {}

/// The std scalars: each decodes exactly what its schema accepts ([`PlainDecode`]); all but
/// the floats also encode only that ([`PlainEncode`]).
macro_rules! plain_scalars {
    (encode: $($ty:ty),*; decode only: $($float:ty),*) => {
        $(impl sealed::Sealed for $ty {} impl PlainDecode for $ty {} impl PlainEncode for $ty {})*
        $(impl sealed::Sealed for $float {} impl PlainDecode for $float {})*
    };
}

plain_scalars!(
    encode: bool, String, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, PathBuf, serde_json::Value;
    decode only: f32, f64
);

impl<T: PlainDecode> sealed::Sealed for Option<T> {}
impl<T: PlainDecode> PlainDecode for Option<T> {}
impl<T: PlainDecode> sealed::Sealed for Box<T> {}
impl<T: PlainDecode> PlainDecode for Box<T> {}
impl<T: PlainDecode> sealed::Sealed for Vec<T> {}
impl<T: PlainDecode> PlainDecode for Vec<T> {}
impl<T: PlainDecode> sealed::Sealed for VecDeque<T> {}
impl<T: PlainDecode> PlainDecode for VecDeque<T> {}
impl<V: PlainDecode> sealed::Sealed for BTreeMap<String, V> {}
impl<V: PlainDecode> PlainDecode for BTreeMap<String, V> {}
impl<V: PlainDecode, S> sealed::Sealed for HashMap<String, V, S> {}
impl<V: PlainDecode, S> PlainDecode for HashMap<String, V, S> {}

/// A type whose serde `Serialize` writes no value its schemars `JsonSchema` refuses: the
/// [`PlainDecode`] types without floats (`f64::NAN` and the infinities are written as `null`,
/// which a `number` schema refuses). Sealed like [`PlainDecode`]. `#[tool]` asks it (through
/// [`Probe`]) of the function's output type; only when it answers yes may a registry skip the
/// output check of what the body returned, and then only if the output schema is the type's
/// own and its keywords say nothing more either.
pub trait PlainEncode: PlainDecode {}

impl<T: PlainEncode> PlainEncode for Option<T> {}
impl<T: PlainEncode> PlainEncode for Box<T> {}
impl<T: PlainEncode> PlainEncode for Vec<T> {}
impl<T: PlainEncode> PlainEncode for VecDeque<T> {}
impl<V: PlainEncode> PlainEncode for BTreeMap<String, V> {}
impl<V: PlainEncode, S> PlainEncode for HashMap<String, V, S> {}

/// A choice made from a [`Probe`] answer: `Shape<true>` / `Shape<false>` implement
/// [`SingleParam`] and [`Returned`] differently.
pub struct Shape<const YES: bool>;

/// How a tool with one unmarked parameter of type `T` receives its input: through the
/// generated one-field struct `F` when `T` is a plain value (`Shape<true>`), as `T` itself,
/// the whole input, otherwise.
pub trait SingleParam<T, F> {
    /// The tool's input type.
    type Input;
    /// The parameter, out of the input.
    fn param(input: Self::Input) -> T;
}

impl<T, F: OneField<Value = T>> SingleParam<T, F> for Shape<true> {
    type Input = F;
    fn param(input: F) -> T {
        input.into_value()
    }
}

impl<T, F> SingleParam<T, F> for Shape<false> {
    type Input = T;
    fn param(input: T) -> T {
        input
    }
}

/// What a tool function returns, `R`, split into the tool's output and error: a `Result<T, E>`
/// (`Shape<true>`) is `T` or `E`; anything else (`Shape<false>`) is the output itself.
pub trait Returned<R> {
    /// The tool's output type.
    type Output;
    /// The error type (`ToolError` when the function cannot fail).
    type Error;
    /// Splits a returned value.
    fn split(returned: R) -> Result<Self::Output, Self::Error>;
}

impl<T, E> Returned<Result<T, E>> for Shape<true> {
    type Output = T;
    type Error = E;
    fn split(returned: Result<T, E>) -> Result<T, E> {
        returned
    }
}

impl<R> Returned<R> for Shape<false> {
    type Output = R;
    type Error = ToolError;
    fn split(returned: R) -> Result<R, ToolError> {
        Ok(returned)
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

/// Converts what a tool function returned (`R`, split by `S`: see [`Returned`]) into the
/// tool's result.
pub fn tool_result<S: Returned<R>, R>(returned: R) -> Result<S::Output, ToolError>
where
    S::Error: IntoToolError,
{
    S::split(returned).map_err(IntoToolError::into_tool_error)
}

/// What a transform may return.
#[diagnostic::on_unimplemented(
    message = "a transform must return `serde_json::Value`, `Option<Value>` or `Result<Value, E>`; found `{Self}`",
    label = "this transform's return type is not supported"
)]
pub trait TransformReturn {
    /// Converts (`None` = yielded nothing).
    fn into_transformed(self) -> Option<Result<serde_json::Value, ToolError>>;
}

impl TransformReturn for serde_json::Value {
    fn into_transformed(self) -> Option<Result<serde_json::Value, ToolError>> {
        Some(Ok(self))
    }
}

impl TransformReturn for Option<serde_json::Value> {
    fn into_transformed(self) -> Option<Result<serde_json::Value, ToolError>> {
        self.map(Ok)
    }
}

impl<E: Display + 'static> TransformReturn for Result<serde_json::Value, E> {
    fn into_transformed(self) -> Option<Result<serde_json::Value, ToolError>> {
        Some(self.map_err(user_error))
    }
}

/// What a lifecycle hook may return.
#[diagnostic::on_unimplemented(
    message = "a lifecycle hook must return `()` or `Result<(), E>`; found `{Self}`",
    label = "this hook's return type is not supported"
)]
pub trait HookReturn {
    /// Converts.
    fn into_hook_result(self) -> Result<(), ToolError>;
}

impl HookReturn for () {
    fn into_hook_result(self) -> Result<(), ToolError> {
        Ok(())
    }
}

impl<E: Display + 'static> HookReturn for Result<(), E> {
    fn into_hook_result(self) -> Result<(), ToolError> {
        self.map_err(user_error)
    }
}

/// What an approval predicate may return.
#[diagnostic::on_unimplemented(
    message = "a `require_approval` predicate must return `bool` or `Result<bool, E>`; found `{Self}`",
    label = "this predicate's return type is not supported"
)]
pub trait ApprovalReturn {
    /// Converts (`Err` = approval required).
    fn into_approval(self) -> Result<bool, ToolError>;
}

impl ApprovalReturn for bool {
    fn into_approval(self) -> Result<bool, ToolError> {
        Ok(self)
    }
}

impl<E: Display + 'static> ApprovalReturn for Result<bool, E> {
    fn into_approval(self) -> Result<bool, ToolError> {
        self.map_err(user_error)
    }
}

/// The error a hook, transform or predicate returned, as a [`ToolError`]: one it returned
/// as such is kept (kind, details and all); any other error type is an execution error
/// with its text (hooks may fail with a `String`, which converts into no `ToolError`).
fn user_error<E: Display + 'static>(e: E) -> ToolError {
    let boxed: Box<dyn std::any::Any> = Box::new(e);
    match boxed.downcast::<ToolError>() {
        Ok(own) => *own,
        Err(other) => ToolError::new(
            // `E` is still the only type it can be: word it through its `Display`.
            other.downcast::<E>().map(|e| e.to_string()).unwrap_or_default(),
        ),
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

/// The output type of a `#[tool]` without a body is read back from the application's result.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be read back: a `#[tool]` without a body takes its output from the application, so its output type must derive `serde::Deserialize`",
    label = "add `#[derive(Deserialize)]` to this type"
)]
pub trait ClientResult: Sized {
    /// Reads the result.
    fn read(result: serde_json::Value) -> Result<Self, ToolError>;
}
impl<T: serde::de::DeserializeOwned> ClientResult for T {
    fn read(result: serde_json::Value) -> Result<Self, ToolError> {
        serde_json::from_value(result).map_err(|e| ToolError::with_kind(crate::ErrorKind::InvalidOutput, e.to_string()))
    }
}

/// Reads the application's result for a call of a `#[tool]` without a body.
pub fn read_result<T: ClientResult>(result: serde_json::Value) -> Result<T, ToolError> {
    T::read(result)
}

/// The error of a `#[tool]` without a body asked to run (the runtime never asks).
pub fn client_side_error(id: &str) -> ToolError {
    crate::tool::client_side_error(id)
}

/// Asserts at compile time that a payload type has a schema.
pub const fn assert_schema<T: HasSchema + ?Sized>() {}

/// Serialises an attribute expression (`meta = …`, `provider_options(x = …)`) to JSON.
pub fn to_json<T: serde::Serialize>(value: T) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}

/// An attribute's list of names (`tags`, `scopes`), owned: one function for every tool, so
/// each tool's expansion only names its literals.
pub fn strings(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

/// The attribute's `provider_options(...)`, by provider (a later entry for the same provider
/// wins, as the attribute's validation allows none).
pub fn options(entries: Vec<(&str, serde_json::Value)>) -> BTreeMap<String, serde_json::Value> {
    entries.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
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
pub fn transformed<R: TransformReturn>(r: R) -> Option<Result<serde_json::Value, ToolError>> {
    r.into_transformed()
}

/// Runs a hook function.
pub fn hook<R: HookReturn>(r: R) -> Result<(), ToolError> {
    r.into_hook_result()
}

/// An approval predicate of a tool with input `I` and request context `C`: it takes
/// `(&I, &C)`, or `(&I, &C, Option<&Caller>)` to decide by who calls. `M` tells the two
/// apart (inferred, never written).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be this tool's `require_approval` predicate",
    label = "expected a function `fn(&Input, &Context) -> bool` (or `Result<bool, E>`), or `fn(&Input, &Context, Option<&Caller>) -> …`",
    note = "`Input` is the tool's input type and `Context` its request-context type (`RequestContext` unless `context = …` says otherwise)"
)]
pub trait ApprovalPredicate<I, C, M> {
    /// Runs the predicate (`Err`: approval required).
    fn decide(&self, input: &I, context: &C, caller: Option<&crate::Caller>) -> Result<bool, ToolError>;
}

/// [`ApprovalPredicate`]'s marker for a predicate over the input and context.
pub struct OverInput;
/// [`ApprovalPredicate`]'s marker for a predicate that also reads the caller.
pub struct OverCaller;

impl<I, C, F, R> ApprovalPredicate<I, C, OverInput> for F
where
    F: Fn(&I, &C) -> R,
    R: ApprovalReturn,
{
    fn decide(&self, input: &I, context: &C, _: Option<&crate::Caller>) -> Result<bool, ToolError> {
        self(input, context).into_approval()
    }
}

impl<I, C, F, R> ApprovalPredicate<I, C, OverCaller> for F
where
    F: Fn(&I, &C, Option<&crate::Caller>) -> R,
    R: ApprovalReturn,
{
    fn decide(&self, input: &I, context: &C, caller: Option<&crate::Caller>) -> Result<bool, ToolError> {
        self(input, context, caller).into_approval()
    }
}

/// Runs an approval predicate.
pub fn approval<I, C, M>(
    predicate: impl ApprovalPredicate<I, C, M>,
    input: &I,
    context: &C,
    caller: Option<&crate::Caller>,
) -> Result<bool, ToolError> {
    predicate.decide(input, context, caller)
}

/// How the `#[ctx]` parameter, of type `T`, receives the call's context, for a tool whose
/// payload types are `S` and `R` (its `suspend` and `resume` types, [`NoPayload`] when not
/// declared): when `T` is a `ToolContext<C, PS, PR>` (`Shape<true>`, from
/// `Probe::<T>::IS_CONTEXT`), as that, `C` being the request-context type unless `context = …`
/// says otherwise. `PS` and `PR` are checked against `S` and `R` beside it
/// ([`suspends_with`], [`resumes_with`] and their untyped forms), once, at the parameter's
/// type; the conversion itself always compiles, so a mismatch is one error. For any other `T`
/// the check beside it has already failed (once, at the parameter's type); `Shape<false>`
/// only keeps the rest of the expansion free of further errors (its payload types are the
/// tool's own, so their checks pass).
pub trait ContextParam<T, S, R> {
    /// The request-context type.
    type Context;
    /// The suspend payload type the parameter names.
    type Suspend;
    /// The resume data type the parameter names.
    type Resume;
    /// The parameter.
    fn param(cx: ToolContext<Self::Context, S, R>) -> T;
}

impl<C, S, R, PS, PR> ContextParam<ToolContext<C, PS, PR>, S, R> for Shape<true> {
    type Context = C;
    type Suspend = PS;
    type Resume = PR;
    fn param(cx: ToolContext<C, S, R>) -> ToolContext<C, PS, PR> {
        cx.with_payloads()
    }
}

impl<T, S, R> ContextParam<T, S, R> for Shape<false> {
    type Context = RequestContext;
    type Suspend = S;
    type Resume = R;
    fn param(_: ToolContext<RequestContext, S, R>) -> T {
        stub()
    }
}

/// The `#[ctx]` parameter of a tool with `context = C`: the call's context with the payload
/// types the parameter names, `PS` and `PR` (checked beside it, as for [`ContextParam`]).
/// Generated code names every type, so a parameter with another request-context type than `C`
/// is reported against the function's signature, as it names it.
pub fn context_param<C, S, R, PS, PR>(cx: ToolContext<C, S, R>) -> ToolContext<C, PS, PR> {
    cx.with_payloads()
}

/// A `#[ctx]` parameter's suspend payload type, `Self`, is the one the tool declares.
#[diagnostic::on_unimplemented(
    message = "the `#[ctx]` parameter suspends with `{Self}`, but the tool declares `suspend = {Declared}`",
    label = "this context's suspend payload type is `{Self}`, not `{Declared}`",
    note = "`cx.suspend(payload)` takes the tool's `suspend` type: write `#[ctx] cx: ToolContext<C, {Declared}, R>`, `C` the request-context type (`RequestContext` without `context = …`) and `R` the `resume` type (`Value` without `resume = …`)"
)]
pub trait SuspendsWith<Declared: ?Sized> {}
impl<T: ?Sized> SuspendsWith<T> for T {}

/// A `#[ctx]` parameter's suspend payload type, `Self`, is untyped, as the tool declares none.
#[diagnostic::on_unimplemented(
    message = "the `#[ctx]` parameter suspends with `{Self}`, but the tool declares no `suspend` type",
    label = "this context's suspend payload type is `{Self}`, not the untyped `Value`",
    note = "declare it: `#[tool(suspend = {Self})]` (its schema is published and every payload checked against it); or take the untyped `ToolContext<C>`"
)]
pub trait SuspendsUntyped {}
impl SuspendsUntyped for serde_json::Value {}

/// A `#[ctx]` parameter's resume data type, `Self`, is the one the tool declares.
#[diagnostic::on_unimplemented(
    message = "the `#[ctx]` parameter resumes with `{Self}`, but the tool declares `resume = {Declared}`",
    label = "this context's resume data type is `{Self}`, not `{Declared}`",
    note = "`cx.resume_data()` gives the tool's `resume` type: write `#[ctx] cx: ToolContext<C, S, {Declared}>`, `C` the request-context type (`RequestContext` without `context = …`) and `S` the `suspend` type (`Value` without `suspend = …`)"
)]
pub trait ResumesWith<Declared: ?Sized> {}
impl<T: ?Sized> ResumesWith<T> for T {}

/// A `#[ctx]` parameter's resume data type, `Self`, is untyped, as the tool declares none.
#[diagnostic::on_unimplemented(
    message = "the `#[ctx]` parameter resumes with `{Self}`, but the tool declares no `resume` type",
    label = "this context's resume data type is `{Self}`, not the untyped `Value`",
    note = "declare it: `#[tool(resume = {Self})]` (its schema is published and resume data checked against it); or take the untyped `ToolContext<C>`"
)]
pub trait ResumesUntyped {}
impl ResumesUntyped for serde_json::Value {}

/// Asserts at compile time that the `#[ctx]` parameter suspends with the declared type `D`.
pub const fn suspends_with<P: SuspendsWith<D> + ?Sized, D: ?Sized>() {}

/// Asserts at compile time that the `#[ctx]` parameter suspends untyped (nothing declared).
pub const fn suspends_untyped<P: SuspendsUntyped + ?Sized>() {}

/// Asserts at compile time that the `#[ctx]` parameter resumes with the declared type `D`.
pub const fn resumes_with<P: ResumesWith<D> + ?Sized, D: ?Sized>() {}

/// Asserts at compile time that the `#[ctx]` parameter resumes untyped (nothing declared).
pub const fn resumes_untyped<P: ResumesUntyped + ?Sized>() {}
