//! Checks that neither the attribute parser nor the function reader can make alone: the id
//! rules of every provider, a description, `async`, no generics, and what a tool without a
//! body (client-side) cannot ask for.

use heck::ToKebabCase;
use syn::{LitStr, Signature};

use crate::ast::ToolFn;
use crate::attr::ToolAttrs;
use crate::ctxt::Ctxt;

/// The id and description after validation.
pub struct Names {
    pub id: String,
    pub description: String,
}

/// The rule every provider accepts: `^[a-zA-Z0-9_-]{1,64}$`.
fn id_problem(id: &str) -> Option<String> {
    if id.is_empty() {
        return Some("it is empty".into());
    }
    if id.chars().count() > 64 {
        return Some(format!("it is {} characters long, more than 64", id.chars().count()));
    }
    id.chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
        .map(|c| format!("it contains `{c}`"))
}

/// Why a parameter's `header` is not an MCP header name (SEP-2243: an RFC 9110 token, ASCII
/// letters, digits and `!#$%&'*+-.^_`|~`, sent as `Mcp-Param-{name}`), worded as a fix.
pub fn header_name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("the header name is empty: name it, e.g. `header = \"Region\"` (sent as `Mcp-Param-Region`)".into());
    }
    let bad = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(*c)))?;
    Some(format!(
        "`{bad}` cannot be in an HTTP header name: use ASCII letters, digits and `-` (the header is sent as `Mcp-Param-{name}`)"
    ))
}

pub fn check(cx: &mut Ctxt, attrs: &ToolAttrs, f: &ToolFn) -> Names {
    signature(cx, &f.item.sig, f.client_side.is_none());
    if f.client_side.is_some() {
        client_side(cx, attrs, f);
    }
    Names {
        id: id(cx, attrs, &f.item.sig),
        description: description(cx, attrs, f),
    }
}

/// What a tool function cannot be: sync (when it has a body), generic, variadic, `unsafe`.
fn signature(cx: &mut Ctxt, sig: &Signature, has_body: bool) {
    if has_body && sig.asyncness.is_none() {
        cx.error_spanned_by(
            sig.fn_token,
            "`#[tool]` functions must be `async fn`: write `async fn` (the body may simply not await)",
        );
    }
    if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
        cx.error_spanned_by(
            &sig.generics,
            "`#[tool]` functions cannot be generic: a tool needs one concrete input and output type",
        );
    }
    if let Some(v) = &sig.variadic {
        cx.error_spanned_by(v, "`#[tool]` functions cannot be variadic");
    }
    if let Some(u) = &sig.unsafety {
        cx.error_spanned_by(u, "`#[tool]` functions cannot be `unsafe`: a model decides when they run");
    }
}

/// What a tool without a body cannot ask for: everything about running a body (where it runs,
/// in the background, suspending, its `#[ctx]`). Each is reported at itself, with the fix.
fn client_side(cx: &mut Ctxt, attrs: &ToolAttrs, f: &ToolFn) {
    const NO_BODY: &str = "this tool has no body (its calls are answered by the application)";
    if let Some(span) = attrs.blocking {
        cx.syn_error(syn::Error::new(
            span,
            format!("`blocking` places a tool's body, and {NO_BODY}: remove `blocking`, or give the function a body"),
        ));
    }
    if let Some((span, _)) = attrs.idempotent {
        cx.syn_error(syn::Error::new(
            span,
            format!("`idempotent` runs a tool's body once per call, and {NO_BODY}: remove `idempotent`, or give the function a body"),
        ));
    }
    if let Some(lit) = &attrs.isolate {
        cx.error_spanned_by(
            lit,
            format!("`isolate` runs a tool's body in a child process, and {NO_BODY}: remove `isolate`, or give the function a body"),
        );
    }
    if let Some(span) = attrs.background.as_ref().and_then(|b| b.span) {
        cx.syn_error(syn::Error::new(
            span,
            format!("`background` runs a tool's body as a task, and {NO_BODY}: remove `background(...)`"),
        ));
    }
    for (ty, key) in [(&attrs.suspend, "suspend"), (&attrs.resume, "resume")] {
        if let Some(ty) = ty {
            cx.error_spanned_by(
                ty,
                format!(
                    "only a body can suspend, and {NO_BODY}: remove `{key} = ...` (its call already waits for the application's result)"
                ),
            );
        }
    }
    for tr in [&attrs.display, &attrs.transcript].into_iter().flatten() {
        for (phase, path) in tr.entries() {
            if phase == "suspend" || phase == "resume" {
                cx.error_spanned_by(
                    path,
                    format!("a `{phase}` transform needs a body that suspends, and {NO_BODY}: remove it"),
                );
            }
        }
    }
    for p in &f.params {
        if let crate::ast::Param::Context(ty) = p {
            cx.error_spanned_by(ty, format!("the `#[ctx]` parameter is handed to a tool's body, and {NO_BODY}: remove it (`context = Type` still validates the request context)"));
        }
    }
}

/// `id = "..."`, else the function's name in kebab-case; either must suit every provider.
fn id(cx: &mut Ctxt, attrs: &ToolAttrs, sig: &Signature) -> String {
    if let Some(lit) = &attrs.id {
        let id = lit.value();
        if let Some(problem) = id_problem(&id) {
            cx.error_spanned_by(lit, format!("invalid tool id `{id}`: {problem}; ids must be 1 to 64 characters from a-z, A-Z, 0-9, `_` and `-`, the rule every provider accepts"));
        }
        return id;
    }
    let id = sig.ident.to_string().trim_start_matches("r#").to_kebab_case();
    if let Some(problem) = id_problem(&id) {
        cx.error_spanned_by(&sig.ident, format!("the id derived from this name, `{id}`, is invalid: {problem}; set `id = \"...\"` with at most 64 characters from a-z, A-Z, 0-9, `_` and `-`"));
    }
    id
}

/// `description = "..."`, else the doc comment; one of them, not empty.
fn description(cx: &mut Ctxt, attrs: &ToolAttrs, f: &ToolFn) -> String {
    if let Some(lit) = &attrs.description {
        return nonempty(cx, lit);
    }
    if f.docs.is_empty() {
        let name = &f.item.sig.ident;
        cx.error_spanned_by(
            name,
            format!("tool `{name}` has no description: the model reads it to decide when to call the tool; add a doc comment (`/// What it does`) or `description = \"...\"`"),
        );
    }
    f.docs.clone()
}

fn nonempty(cx: &mut Ctxt, lit: &LitStr) -> String {
    let v = lit.value();
    if v.trim().is_empty() {
        cx.error_spanned_by(
            lit,
            "the description is empty: say what the tool does, the model reads it to decide when to call",
        );
    }
    v.trim().to_owned()
}
