//! Parses `#[tool(...)]`'s arguments into [`ToolAttrs`]: one strict grammar (`grammar`), every
//! token matched or reported at itself; the keys with a shape of their own are in `nested`.

mod grammar;
mod nested;

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::{Expr, ExprArray, ExprLit, Ident, Lit, LitBool, LitInt, LitStr, Path, Token, Type};

use crate::ctxt::Ctxt;
use grammar::{fn_path, parse_fn_path, set, set_some, unknown};

pub enum Approval {
    Always,
    Predicate(Path),
}

#[derive(Default)]
pub struct Transforms {
    pub input: Option<Path>,
    pub input_delta: Option<Path>,
    pub output: Option<Path>,
    pub error: Option<Path>,
    pub approval: Option<Path>,
    pub suspend: Option<Path>,
    pub resume: Option<Path>,
}

impl Transforms {
    /// `(phase name, path)` for every configured phase.
    pub fn entries(&self) -> Vec<(&'static str, &Path)> {
        [
            ("input", &self.input),
            ("input_delta", &self.input_delta),
            ("output", &self.output),
            ("error", &self.error),
            ("approval", &self.approval),
            ("suspend", &self.suspend),
            ("resume", &self.resume),
        ]
        .into_iter()
        .filter_map(|(k, p)| p.as_ref().map(|p| (k, p)))
        .collect()
    }
}

#[derive(Default)]
pub struct Mcp {
    pub title: Option<LitStr>,
    /// `requires = ["sampling"]`: the client capabilities a call needs.
    pub requires: Option<Vec<LitStr>>,
    pub read_only_hint: Option<LitBool>,
    pub destructive_hint: Option<LitBool>,
    pub idempotent_hint: Option<LitBool>,
    pub open_world_hint: Option<LitBool>,
    pub meta: Option<Expr>,
}

#[derive(Default)]
pub struct Background {
    /// Where `background` is written.
    pub span: Option<Span>,
    pub enabled: Option<LitBool>,
    pub timeout_ms: Option<LitInt>,
    pub max_retries: Option<LitInt>,
    pub wait_timeout_ms: Option<LitInt>,
    /// `required`: the tool runs only as a task (where `required` is written).
    pub required: Option<Span>,
    /// `asks_first`: the first run gathers input in the foreground (where it is written).
    pub asks_first: Option<Span>,
}

/// Everything `#[tool(...)]` can say.
#[derive(Default)]
pub struct ToolAttrs {
    pub id: Option<LitStr>,
    pub description: Option<LitStr>,
    pub title: Option<LitStr>,
    pub strict: Option<Span>,
    pub require_approval: Option<Approval>,
    pub to_model_output: Option<Path>,
    pub display: Option<Transforms>,
    pub transcript: Option<Transforms>,
    pub suspend: Option<Type>,
    pub resume: Option<Type>,
    pub context: Option<Type>,
    pub mcp: Option<Mcp>,
    /// `icon = "https://…/icon.png"`: the tool's icon for MCP clients (SEP-973).
    pub icon: Option<LitStr>,
    pub provider_options: Option<Vec<(Ident, Expr)>>,
    pub tags: Option<Vec<LitStr>>,
    /// `scopes = [...]`: the OAuth scopes a caller's access token must grant.
    pub scopes: Option<Vec<LitStr>>,
    pub input_examples: Option<Vec<Expr>>,
    pub background: Option<Background>,
    pub on_input_start: Option<Path>,
    pub on_input_delta: Option<Path>,
    pub on_input_available: Option<Path>,
    pub on_output: Option<Path>,
    /// `blocking`: the body runs on the bounded blocking pool.
    pub blocking: Option<Span>,
    /// `isolate = "process"`: each call runs in a child process.
    pub isolate: Option<LitStr>,
    /// `max_model_output = "16KiB"`: the most the model sees of one result, in bytes.
    pub max_model_output: Option<u64>,
    /// `idempotent` (`= "fail"`, `= "recover"`): exactly once per idempotency key; the span
    /// and whether an interrupted run is recovered.
    pub idempotent: Option<(Span, bool)>,
    /// `defer_loading`: left out of requests until tool search finds it.
    pub defer_loading: Option<Span>,
    /// `namespace = "crm"`: the group the tool is listed and searched under.
    pub namespace: Option<LitStr>,
    /// `eager_input_streaming`: Anthropic streams the input without buffering.
    pub eager_input_streaming: Option<Span>,
    /// `allowed_callers = [...]`: who may call the tool (the model, code it runs).
    pub allowed_callers: Option<Vec<LitStr>>,
    /// `behavior = "non_blocking"`: Gemini's function behavior; `true` for non-blocking.
    pub behavior: Option<bool>,
}

const TOP_KEYS: &str = "id, description, title, icon, strict, blocking, isolate, require_approval, to_model_output, transform, suspend, resume, context, mcp, provider_options, input_examples, tags, scopes, background, max_model_output, idempotent, defer_loading, namespace, eager_input_streaming, allowed_callers, behavior, on_input_start, on_input_delta, on_input_available, on_output";

/// Parses `#[tool(...)]`, recording every problem in `cx`.
pub fn parse(cx: &mut Ctxt, args: TokenStream) -> ToolAttrs {
    let mut attrs = ToolAttrs::default();
    let parser = syn::meta::parser(|meta| parse_key(cx, &mut attrs, meta));
    if let Err(e) = syn::parse::Parser::parse2(parser, args) {
        cx.syn_error(e);
    }
    attrs
}

/// Why an `icon` is not an icon's address: an `https:`, `http:` or `data:` URI.
fn icon_problem(src: &str) -> Option<String> {
    let scheme = src.split_once(':').map(|(s, _)| s.to_ascii_lowercase());
    match scheme.as_deref() {
        Some("https" | "http" | "data") if !src.chars().any(char::is_whitespace) => None,
        _ => Some(format!(
            "`{src}` is not an icon's address: write an `https:` URL (or a `data:` URI), e.g. `icon = \"https://example.com/icon.png\"`"
        )),
    }
}

/// One top-level key and its value.
fn parse_key(cx: &mut Ctxt, a: &mut ToolAttrs, meta: ParseNestedMeta) -> syn::Result<()> {
    let Some(key) = meta.path.get_ident().map(Ident::to_string) else {
        return unknown(cx, &meta, "`#[tool]`", TOP_KEYS);
    };
    match key.as_str() {
        "id" => set(cx, &meta, &mut a.id, meta.value()?.parse()?),
        "description" => set(cx, &meta, &mut a.description, meta.value()?.parse()?),
        "title" => set(cx, &meta, &mut a.title, meta.value()?.parse()?),
        "icon" => {
            let v: LitStr = meta.value()?.parse()?;
            if let Some(why) = icon_problem(&v.value()) {
                cx.error_spanned_by(&v, why);
            }
            set(cx, &meta, &mut a.icon, v)
        }
        "suspend" => set(cx, &meta, &mut a.suspend, meta.value()?.parse()?),
        "resume" => set(cx, &meta, &mut a.resume, meta.value()?.parse()?),
        "context" => set(cx, &meta, &mut a.context, meta.value()?.parse()?),
        "strict" => flag(cx, &meta, &mut a.strict, "leave `strict` out, tools are not strict by default")?,
        "blocking" => flag(
            cx,
            &meta,
            &mut a.blocking,
            "leave `blocking` out, tool bodies run on the async workers by default",
        )?,
        "defer_loading" => flag(
            cx,
            &meta,
            &mut a.defer_loading,
            "leave `defer_loading` out, tools are loaded up front by default",
        )?,
        "namespace" => namespace(cx, a, &meta)?,
        "eager_input_streaming" => flag(
            cx,
            &meta,
            &mut a.eager_input_streaming,
            "leave `eager_input_streaming` out, the API's default then applies",
        )?,
        "allowed_callers" => nested::allowed_callers(cx, a, &meta)?,
        "behavior" => behavior(cx, a, &meta)?,
        "isolate" => isolate(cx, a, &meta)?,
        "max_model_output" => max_model_output(cx, a, &meta)?,
        "idempotent" => idempotent(cx, a, &meta)?,
        "require_approval" => require_approval(cx, a, &meta)?,
        "to_model_output" => {
            let v = parse_fn_path(cx, &meta, "to_model_output", "fn(&Output) -> ModelOutput")?;
            set_some(cx, &meta, &mut a.to_model_output, v)
        }
        "on_input_start" | "on_input_delta" | "on_input_available" | "on_output" => hook(cx, a, &meta, &key)?,
        "input_examples" => {
            let arr: ExprArray = meta.value()?.parse()?;
            set(cx, &meta, &mut a.input_examples, arr.elems.into_iter().collect())
        }
        "transform" => nested::transform(cx, a, &meta)?,
        "mcp" => nested::mcp(cx, a, &meta)?,
        "provider_options" => nested::provider_options(cx, a, &meta)?,
        "tags" => nested::tags(cx, a, &meta)?,
        "scopes" => nested::scopes(cx, a, &meta)?,
        "background" => nested::background(cx, a, &meta)?,
        _ => return unknown(cx, &meta, "`#[tool]`", TOP_KEYS),
    }
    Ok(())
}

/// A flag (`strict`, `blocking`); a value (`strict = true`) is reported with the fix. `off`
/// says what to write instead of `= false`.
pub(super) fn flag(cx: &mut Ctxt, meta: &ParseNestedMeta, slot: &mut Option<Span>, off: &str) -> syn::Result<()> {
    if !meta.input.peek(Token![=]) {
        set(cx, meta, slot, syn::spanned::Spanned::span(&meta.path));
        return Ok(());
    }
    let key = grammar::key_name(meta);
    let value: Expr = meta.value()?.parse()?;
    let on = format!("write `{key}` alone to turn it on");
    let fix = match &value {
        Expr::Lit(ExprLit { lit: Lit::Bool(b), .. }) if !b.value => off,
        _ => &on,
    };
    let path = &meta.path;
    cx.error_spanned_by(
        quote::quote!(#path = #value),
        format!("`{key}` is a flag and takes no value: {fix}"),
    );
    Ok(())
}

/// `namespace = "crm"`: 1 to 64 of `a-z`, `A-Z`, `0-9`, `_`, `-` (the rule of
/// `tool_core::spec::is_namespace`); anything else is reported at the value.
fn namespace(cx: &mut Ctxt, a: &mut ToolAttrs, meta: &ParseNestedMeta) -> syn::Result<()> {
    const FIX: &str = "write 1 to 64 of a-z, A-Z, 0-9, `_`, `-`, e.g. `namespace = \"crm\"`";
    let value: Expr = meta.value()?.parse()?;
    match &value {
        Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => {
            let name = s.value();
            let ok = (1..=64).contains(&name.len()) && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'));
            if ok {
                set(cx, meta, &mut a.namespace, s.clone());
            } else {
                cx.error_spanned_by(s, format!("`{name}` is not a namespace: {FIX}"));
            }
        }
        _ => cx.error_spanned_by(&value, format!("`namespace` takes a string: {FIX}")),
    }
    Ok(())
}

/// `behavior = "blocking"` or `behavior = "non_blocking"` (Gemini's function behavior);
/// anything else is reported at the value.
fn behavior(cx: &mut Ctxt, a: &mut ToolAttrs, meta: &ParseNestedMeta) -> syn::Result<()> {
    const FIX: &str = "write `behavior = \"non_blocking\"` (the model goes on without waiting for the result) or `behavior = \"blocking\"`";
    let value: Expr = meta.value()?.parse()?;
    match &value {
        Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) if s.value() == "blocking" => set(cx, meta, &mut a.behavior, false),
        Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) if s.value() == "non_blocking" => set(cx, meta, &mut a.behavior, true),
        _ => cx.error_spanned_by(&value, format!("unknown `behavior`: {FIX}")),
    }
    Ok(())
}

/// `isolate = "process"`, the one isolation there is; anything else is reported at the value.
fn isolate(cx: &mut Ctxt, a: &mut ToolAttrs, meta: &ParseNestedMeta) -> syn::Result<()> {
    let (tokens, what) = if meta.input.peek(Token![=]) {
        match meta.value()?.parse::<Expr>()? {
            Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) if s.value() == "process" => {
                set(cx, meta, &mut a.isolate, s);
                return Ok(());
            }
            Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => {
                let found = s.value();
                (quote::quote!(#s), format!("unknown isolation `\"{found}\"`"))
            }
            other => (quote::quote!(#other), "`isolate` takes a string".to_owned()),
        }
    } else {
        grammar::skip_value(meta)?;
        let path = &meta.path;
        (quote::quote!(#path), "`isolate` needs a value".to_owned())
    };
    cx.error_spanned_by(
        tokens,
        format!("{what}: write `isolate = \"process\"` to run each call in a child process (a crash, an abort or running out of memory then fails only that call)"),
    );
    Ok(())
}

/// `max_model_output = "16KiB"` (or a number of bytes); a size that is not one is reported at
/// the value, checked here so a wrong size never reaches run time.
fn max_model_output(cx: &mut Ctxt, a: &mut ToolAttrs, meta: &ParseNestedMeta) -> syn::Result<()> {
    const FIX: &str = "write a size such as `max_model_output = \"16KiB\"` (or `\"64kB\"`, `\"1MiB\"`, a number of bytes)";
    let value: Expr = meta.value()?.parse()?;
    let parsed = match &value {
        Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => s.value().trim().parse::<bytesize::ByteSize>().ok().map(|b| b.as_u64()),
        Expr::Lit(ExprLit { lit: Lit::Int(i), .. }) => i.base10_parse::<u64>().ok(),
        _ => None,
    };
    match parsed {
        Some(0) => cx.error_spanned_by(&value, format!("`max_model_output` must be at least one byte: {FIX}")),
        Some(bytes) => set(cx, meta, &mut a.max_model_output, bytes),
        None => cx.error_spanned_by(&value, format!("`max_model_output` takes a size: {FIX}")),
    }
    Ok(())
}

/// `idempotent` alone (an interrupted run ends its call with an error), or `idempotent =
/// "fail"` / `idempotent = "recover"` (the body runs again, told by its key); anything else is
/// reported at the value.
fn idempotent(cx: &mut Ctxt, a: &mut ToolAttrs, meta: &ParseNestedMeta) -> syn::Result<()> {
    const FIX: &str = "write `idempotent` alone (an interrupted run ends its call with an error), or `idempotent = \"recover\"` (the body runs again and is told through `cx.idempotency_key().after_interruption()`)";
    let span = syn::spanned::Spanned::span(&meta.path);
    if !meta.input.peek(Token![=]) {
        set(cx, meta, &mut a.idempotent, (span, false));
        return Ok(());
    }
    let value: Expr = meta.value()?.parse()?;
    match &value {
        Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) if s.value() == "fail" => set(cx, meta, &mut a.idempotent, (span, false)),
        Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) if s.value() == "recover" => set(cx, meta, &mut a.idempotent, (span, true)),
        Expr::Lit(ExprLit { lit: Lit::Bool(_), .. }) => cx.error_spanned_by(
            &value,
            format!("`idempotent` takes no `true`/`false`: {FIX}; leave it out for a tool that runs on every call"),
        ),
        _ => cx.error_spanned_by(&value, format!("unknown `idempotent` policy: {FIX}")),
    }
    Ok(())
}

/// `require_approval` alone, or `require_approval = predicate`; `= true`/`= false` is reported
/// with the fix.
fn require_approval(cx: &mut Ctxt, a: &mut ToolAttrs, meta: &ParseNestedMeta) -> syn::Result<()> {
    if !meta.input.peek(Token![=]) {
        set(cx, meta, &mut a.require_approval, Approval::Always);
        return Ok(());
    }
    let value = match meta.value()?.parse::<Expr>()? {
        Expr::Lit(ExprLit { lit: Lit::Bool(b), .. }) => {
            let fix = if b.value {
                "write `require_approval` alone to always require approval"
            } else {
                "leave `require_approval` out, tools need no approval by default"
            };
            cx.error_spanned_by(&b, format!("`require_approval` takes no `true`/`false`: {fix}, or name a predicate `fn(&Input, &Context) -> bool` with `require_approval = my_fn`"));
            None
        }
        value => fn_path(cx, value, "require_approval", "fn(&Input, &Context) -> bool").map(Approval::Predicate),
    };
    set_some(cx, meta, &mut a.require_approval, value);
    Ok(())
}

/// `on_input_start = f` and the other lifecycle hooks.
fn hook(cx: &mut Ctxt, a: &mut ToolAttrs, meta: &ParseNestedMeta, key: &str) -> syn::Result<()> {
    let (slot, signature) = match key {
        "on_input_start" => (&mut a.on_input_start, "fn(&ToolCallInfo)"),
        "on_input_delta" => (&mut a.on_input_delta, "fn(&ToolCallInfo, &str)"),
        "on_input_available" => (&mut a.on_input_available, "fn(&ToolCallInfo, &Input)"),
        _ => (&mut a.on_output, "fn(&ToolCallInfo, &Output)"),
    };
    let v = parse_fn_path(cx, meta, key, signature)?;
    set_some(cx, meta, slot, v);
    Ok(())
}
