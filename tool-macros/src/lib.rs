//! `#[tool]`: turns a documented `async fn` into a registered Toolsmith tool.
//!
//! Use it through `tool_core` (`use tool_core::prelude::*;`), which documents the attribute.
//! The crate is parse → validate → expand: `attr` parses the attribute's arguments,
//! `ast` reads the function, `valid` checks what neither parser can, `expand` writes the
//! tokens through the one versioned path `facade` resolves. Every mistake is collected in a `ctxt::Ctxt` and reported at its own token, and
//! the original function is always re-emitted so one mistake does not cascade.

mod ast;
mod attr;
mod ctxt;
mod expand;
mod facade;
mod valid;

#[cfg(test)]
mod expansion_tests;

use proc_macro::TokenStream;

/// Defines a tool from an `async fn`. See `tool_core`'s crate documentation.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    expand::tool(args.into(), item.into()).into()
}
