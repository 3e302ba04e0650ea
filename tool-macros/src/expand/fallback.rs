//! After any mistake: the errors, the function (so IDEs keep completing it), and stubs of
//! everything other code names, the marker type, `name::tool()` and the `TypedTool` impl
//! behind `InputOf<name>`/`OutputOf<name>`, so a mistake is reported once rather than again
//! at every use of the tool.
//!
//! The stubs keep the real input and output types when the function's types are sound (the
//! mistake was elsewhere), so `InputOf<name>`'s fields still resolve; their bodies never run,
//! as the crate does not compile.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};

use super::input::Input;
use super::output::Output;
use super::{Tool, marker};

pub fn expand(t: &Tool, errors: syn::Error) -> TokenStream {
    let mut out = errors.to_compile_error();
    // A declaration without a body has no function to keep (`item` holds an empty body).
    if t.f.client_side.is_none() {
        t.f.item.to_tokens(&mut out);
    }
    // A method is in an `impl` block, where no stub could go (and nothing names one).
    if t.f.item.sig.receiver().is_none() {
        out.extend(stubs(t));
    }
    out
}

fn stubs(t: &Tool) -> TokenStream {
    let (pr, vis, name) = (&t.pr, t.vis(), t.name());
    let doc = format!("The `#[tool]` definition of [`{name}()`] (it has errors).");
    let marker = marker(t, &doc);
    let (items, input_ty, output_ty) = if t.f.types_sound {
        let (input, output) = (Input::new(t), Output::new(t));
        let (i, o) = (&input.items, &output.items);
        (quote!(#i #o), input.ty, output.ty)
    } else {
        (TokenStream::new(), quote!(()), quote!(()))
    };
    quote! {
        #marker

        const _: () = {
            #[allow(unused_imports)]
            use #pr::ProbeFallback as _;
            #items

            impl #pr::TypedTool for #name {
                type Input = #input_ty;
                type Output = #output_ty;
                type Context = #pr::RequestContext;
                type Suspend = #pr::NoPayload;
                type Resume = #pr::NoPayload;

                fn meta() -> #pr::ToolMeta {
                    #pr::stub()
                }

                fn execute(
                    _: Self::Input,
                    _: #pr::ToolContext<Self::Context, Self::Suspend, Self::Resume>,
                ) -> impl #pr::Future<Output = #pr::Result<Self::Output, #pr::ToolError>> + #pr::Send + 'static {
                    async { #pr::stub() }
                }
            }

            impl #name {
                /// The registered tool (this one has errors).
                #vis fn tool() -> #pr::Result<#pr::Arc<dyn #pr::Tool>, #pr::SchemaError> {
                    #pr::stub()
                }
            }
        };
    }
}
