//! The `TypedTool` impl: the associated types, `execute`, and the parts other modules write.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote, quote_spanned};
use syn::spanned::Spanned;

use super::context::Context;
use super::input::Input;
use super::output::Output;
use super::{Tool, meta, user_fns};
use crate::ast::Param;
use crate::valid::Names;

pub fn expand(t: &Tool, names: &Names, input: &Input, output: &Output) -> TokenStream {
    let (pr, name) = (&t.pr, t.name());
    let (input_ty, output_ty) = (&input.ty, &output.ty);
    let context = Context::new(t);
    let (context_items, context_ty) = (&context.items, &context.ty);
    let (suspend_ty, resume_ty) = (&context.suspend, &context.resume);
    let schema_asserts = [&t.attrs.suspend, &t.attrs.resume, &t.attrs.context]
        .into_iter()
        .flatten()
        .map(|ty| quote_spanned!(ty.span()=> #pr::assert_schema::<#ty>();));
    let meta_fn = meta::expand(t, names, &input.type_name, &input.plain);
    let schema_fn = &input.schema_fn;
    let examples_fn = input.examples_fn(t);
    let execute_fn = execute_fn(t, input, output, &context);
    let user_fns = user_fns::expand(t);
    quote! {
        const _: () = { #(#schema_asserts)* };
        #context_items

        impl #pr::TypedTool for #name {
            type Input = #input_ty;
            type Output = #output_ty;
            type Context = #context_ty;
            type Suspend = #suspend_ty;
            type Resume = #resume_ty;

            #meta_fn
            #schema_fn
            #examples_fn
            #execute_fn
            #user_fns
        }
    }
}

/// `execute`: the input taken apart, the function called with its parameters in order, its
/// return turned into the tool's result. A tool without a body has nothing to call: its
/// `execute` is the client-side error (never reached: the runtime waits for a result), and it
/// reads the application's result instead (`read_result`, spanned at the return type, where a
/// type that cannot be read back is reported).
fn execute_fn(t: &Tool, input: &Input, output: &Output, context: &Context) -> TokenStream {
    let (pr, name) = (&t.pr, t.name());
    if t.f.client_side.is_some() {
        let read = quote_spanned!(t.f.output.span()=> #pr::read_result::<Self::Output>(__toolsmith_result));
        return quote! {
            fn execute(
                _: Self::Input,
                _: #pr::ToolContext<Self::Context, Self::Suspend, Self::Resume>,
            ) -> impl #pr::Future<Output = #pr::Result<Self::Output, #pr::ToolError>> + #pr::Send + 'static {
                #pr::ready(#pr::Result::Err(#pr::client_side_error(<Self as #pr::TypedTool>::meta().id)))
            }

            fn read_result(__toolsmith_result: #pr::serde_json::Value) -> #pr::Result<Self::Output, #pr::ToolError> {
                #read
            }
        };
    }
    let args = t.f.params.iter().map(|p| match p {
        Param::Input => input.whole_arg.clone(),
        Param::Field(i) => input.field_args[*i].to_token_stream(),
        Param::Context(_) => context.arg.clone(),
    });
    let (receive, finish) = (&input.receive, &output.finish);
    quote! {
        fn execute(
            __toolsmith_input: Self::Input,
            __toolsmith_cx: #pr::ToolContext<Self::Context, Self::Suspend, Self::Resume>,
        ) -> impl #pr::Future<Output = #pr::Result<Self::Output, #pr::ToolError>> + #pr::Send + 'static {
            let _ = &__toolsmith_cx;
            #receive
            #pr::returning(#name(#(#args),*), #finish)
        }
    }
}
