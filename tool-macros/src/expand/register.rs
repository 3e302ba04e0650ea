//! `name::tool()` (the tool, built once per process) and its link-time registration.

use proc_macro2::TokenStream;
use quote::quote;

use super::Tool;

pub fn expand(t: &Tool, id: &str) -> TokenStream {
    let (pr, vis, name) = (&t.pr, t.vis(), t.name());
    quote! {
        impl #name {
            /// The registered tool (spec and schemas built once per process).
            #vis fn tool() -> #pr::Result<#pr::Arc<dyn #pr::Tool>, #pr::SchemaError> {
                static TOOL: #pr::OnceLock<#pr::Result<#pr::Arc<dyn #pr::Tool>, #pr::SchemaError>> = #pr::OnceLock::new();
                #pr::registered(&TOOL, <#name as #pr::TypedTool>::into_tool)
            }
        }

        #pr::inventory::submit! {
            #pr::ToolDef {
                id: #id,
                crate_name: #pr::env!("CARGO_PKG_NAME"),
                module_path: #pr::module_path!(),
                file: #pr::file!(),
                line: #pr::line!(),
                build: #name::tool,
            }
        }
    }
}
