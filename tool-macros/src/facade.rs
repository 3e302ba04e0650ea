//! The one path generated code names the runtime through: tool-core's private module under
//! its versioned name, `<tool_core>::__private_v{MAJOR}_{MINOR}`, with `<tool_core>` the name
//! the user's `Cargo.toml` gives the crate (a renamed dependency works).

use proc_macro2::{Span, TokenStream};
use quote::quote;
use syn::Ident;

/// The private module's name, from this crate's own version: tool-core pins tool-macros with
/// `=` and names its module the same way (it checks that at compile time), so a
/// `tool-macros` of another version than the `tool-core` it expands for names a module that
/// does not exist and the pair does not compile.
const PRIVATE: &str = concat!("__private_v", env!("CARGO_PKG_VERSION_MAJOR"), "_", env!("CARGO_PKG_VERSION_MINOR"));

/// `::tool_core::__private_vX_Y` (or the renamed crate's).
pub fn private() -> TokenStream {
    let module = Ident::new(PRIVATE, Span::call_site());
    match proc_macro_crate::crate_name("tool-core") {
        Ok(proc_macro_crate::FoundCrate::Name(name)) => {
            let krate = Ident::new(&name, Span::call_site());
            quote!(::#krate::#module)
        }
        _ => quote!(::tool_core::#module),
    }
}
