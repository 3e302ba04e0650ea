//! Writes the tokens: the original function, a same-named marker type that implements
//! `TypedTool`, the generated input struct and the `inventory` registration; after a mistake,
//! the function and the same nameable items as stubs, beside the errors.
//!
//! One part per module: `input` (the input type and how the function receives it), `output`
//! (the output type and how the function's return becomes the tool's result), `context` (the
//! request-context type and the `#[ctx]` parameter), `typed` (the `TypedTool` impl), `meta`
//! (`ToolMeta`), `user_fns` (the functions the attribute names), `register` (`name::tool()`
//! and the link-time registration), `fallback` (the stubs).
//! Generated code names the runtime only through [`crate::facade::private`].

mod context;
mod fallback;
mod input;
mod meta;
mod output;
mod register;
mod typed;
mod user_fns;

use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote};
use syn::{Ident, Visibility};

use crate::ast::{self, ToolFn};
use crate::attr::{self, ToolAttrs};
use crate::ctxt::Ctxt;
use crate::facade;
use crate::valid::{self, Names};

/// What every part reads: the tool as parsed and the path to the runtime.
pub struct Tool<'a> {
    /// `::tool_core::__private_vX_Y`.
    pub pr: TokenStream,
    pub attrs: &'a ToolAttrs,
    pub f: &'a ToolFn,
}

impl Tool<'_> {
    fn name(&self) -> &Ident {
        &self.f.item.sig.ident
    }

    fn vis(&self) -> &Visibility {
        &self.f.item.vis
    }
}

/// Entry point: parse → validate → expand, or, after any mistake, the errors beside the
/// function and stubs of what other code names (`fallback`), so one mistake is one error.
pub fn tool(args: TokenStream, item: TokenStream) -> TokenStream {
    let (item, client_side) = match ast::read_item(item.clone()) {
        Ok(read) => read,
        Err(e) => {
            let mut out = e.to_compile_error();
            out.extend(item);
            return out;
        }
    };
    let mut cx = Ctxt::new();
    let attrs = attr::parse(&mut cx, args);
    let f = ast::parse(&mut cx, item, client_side);
    let names = valid::check(&mut cx, &attrs, &f);
    let tool = Tool {
        pr: facade::private(),
        attrs: &attrs,
        f: &f,
    };
    match cx.check() {
        Ok(()) => expand(&tool, &names),
        Err(errors) => fallback::expand(&tool, errors),
    }
}

fn expand(t: &Tool, names: &Names) -> TokenStream {
    let pr = &t.pr;
    // A declaration without a body declares the tool only: there is no function to keep.
    let item = t.f.client_side.is_none().then_some(&t.f.item);
    let name = t.name();
    let doc = match t.f.client_side {
        None => format!(
            "The `#[tool]` definition of [`{name}()`]: `{name}::tool()` is the registered tool `{}`.",
            names.id
        ),
        Some(_) => format!(
            "The client-side tool `{}` (no body: the application answers its calls): `{name}::tool()` is the registered tool.",
            names.id
        ),
    };
    let marker = marker(t, &doc);
    let input = input::Input::new(t);
    let output = output::Output::new(t);
    let typed = typed::expand(t, names, &input, &output);
    let register = register::expand(t, &names.id);
    let (input_items, output_items) = (&input.items, &output.items);
    quote! {
        #item
        #marker

        const _: () = {
            #[allow(unused_imports)]
            use #pr::ProbeFallback as _;
            #input_items
            #output_items
            #typed
            #register
        };
    }
}

/// The type named like the function: `name::tool()`, `InputOf<name>`.
fn marker(t: &Tool, doc: &str) -> TokenStream {
    let (vis, name) = (t.vis(), t.name());
    quote! {
        #[allow(non_camel_case_types)]
        #[doc = #doc]
        #vis struct #name {}
    }
}

/// `tokens` with every token given `span`.
fn respan(tokens: TokenStream, span: Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tt| {
            if let proc_macro2::TokenTree::Group(g) = &tt {
                let mut group = proc_macro2::Group::new(g.delimiter(), respan(g.stream(), span));
                group.set_span(span);
                tt = proc_macro2::TokenTree::Group(group);
            } else {
                tt.set_span(span);
            }
            tt
        })
        .collect()
}

/// `Some(v)` / `None` through the private path.
fn opt<T: ToTokens>(v: &Option<T>, pr: &TokenStream) -> TokenStream {
    match v {
        Some(v) => quote!(#pr::Option::Some(#v)),
        None => quote!(#pr::Option::None),
    }
}
