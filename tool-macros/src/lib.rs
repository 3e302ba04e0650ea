//! `#[tool]`: turns a documented `async fn` into a registered Toolsmith tool.
//!
//! Use it through `tool_core` (`use tool_core::prelude::*;`), which documents the attribute.
//! The crate is parse → validate → expand: `attr` parses the attribute's arguments, `ast`
//! reads the function, `valid` checks what neither parser can, `expand` writes the tokens
//! (one module per part) through the path `facade` resolves. Every mistake is collected in a
//! `ctxt::Ctxt` and reported at its own token; after one, the function and stubs of what
//! other code names are emitted beside the errors, so one mistake is one error.

#![cfg_attr(docsrs, feature(doc_cfg))]

mod ast;
mod attr;
mod ctxt;
mod expand;
mod facade;
mod valid;

#[cfg(test)]
mod expansion_tests;

use proc_macro::TokenStream;

/// Defines a tool from an `async fn`. See `tool_core`'s crate documentation for the keys.
///
/// The function's parameters are its input: several parameters become the fields of a
/// generated input struct (`InputOf<name>`), each parameter's doc comment its description. A
/// single parameter is one field too when its type is a plain value (a number, string,
/// collection, map or `Option`, or an alias of one), and the whole input otherwise (a struct);
/// mark it `#[input]` to make it the whole input, or `#[field]` to make it one field, whatever
/// its type (a map as a free-form object input, an enum or a newtype as a field). A parameter
/// marked `#[ctx]` receives the `ToolContext<C, S, R>`: `C` the request context, `S` and `R`
/// the `suspend` and `resume` types, which must be the attribute's (`Value` where it declares
/// none: `ToolContext<C>`), else a compile error at the parameter. The return type is the
/// output, or, for any `Result<T, E>` (aliases too), `T` with `E: Into<ToolError>` as the
/// error.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool(args.into(), item.into()).into()
}
