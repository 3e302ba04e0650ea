//! Parses `#[tool(...)]`'s arguments: one strict grammar, every token matched or reported.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::{Expr, ExprArray, ExprLit, Ident, Lit, LitBool, LitInt, LitStr, Path, Token, Type};

use crate::ctxt::Ctxt;

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
    pub read_only_hint: Option<LitBool>,
    pub destructive_hint: Option<LitBool>,
    pub idempotent_hint: Option<LitBool>,
    pub open_world_hint: Option<LitBool>,
    pub meta: Option<Expr>,
}

#[derive(Default)]
pub struct Background {
    pub enabled: Option<LitBool>,
    pub timeout_ms: Option<LitInt>,
    pub max_retries: Option<LitInt>,
    pub wait_timeout_ms: Option<LitInt>,
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
    pub provider_options: Option<Vec<(Ident, Expr)>>,
    pub tags: Option<Vec<LitStr>>,
    pub input_examples: Option<Vec<Expr>>,
    pub background: Option<Background>,
    pub on_input_start: Option<Path>,
    pub on_input_delta: Option<Path>,
    pub on_input_available: Option<Path>,
    pub on_output: Option<Path>,
}

const TOP_KEYS: &str = "id, description, title, strict, require_approval, to_model_output, transform, suspend, resume, context, mcp, provider_options, input_examples, tags, background, on_input_start, on_input_delta, on_input_available, on_output";
const PHASES: &str = "input, input_delta, output, error, approval, suspend, resume";
const MCP_KEYS: &str = "title, read_only_hint, destructive_hint, idempotent_hint, open_world_hint, meta";
const BACKGROUND_KEYS: &str = "enabled, timeout_ms, max_retries, wait_timeout_ms";

fn key_name(meta: &ParseNestedMeta) -> String {
    meta.path.get_ident().map(|i| i.to_string()).unwrap_or_else(|| {
        let path = &meta.path;
        quote::quote!(#path).to_string().replace(' ', "")
    })
}

/// Stores `value` in `slot`, or reports a duplicate at the key.
fn set<T>(cx: &mut Ctxt, meta: &ParseNestedMeta, slot: &mut Option<T>, value: T) {
    if slot.is_some() {
        let key = key_name(meta);
        cx.error_spanned_by(
            &meta.path,
            format!("duplicate key `{key}`: each key may appear once; remove one of them"),
        );
    } else {
        *slot = Some(value);
    }
}

/// Consumes whatever follows an unknown key (`= expr` or `(...)`) so parsing can go on.
fn skip_value(meta: &ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        let _content;
        syn::parenthesized!(_content in meta.input);
        let _: TokenStream = _content.parse()?;
    }
    Ok(())
}

/// The allowed key closest to `key`: a small edit away, or containing it (`read_only` for
/// `read_only_hint`), or contained in it (`description_text` for `description`).
fn closest<'a>(key: &str, allowed: &'a str) -> Option<&'a str> {
    allowed
        .split(", ")
        .filter(|k| levenshtein(k, key) <= 3 || (key.len() >= 4 && k.contains(key)) || (k.len() >= 4 && key.contains(k)))
        .min_by_key(|k| levenshtein(k, key))
}

fn unknown(cx: &mut Ctxt, meta: &ParseNestedMeta, what: &str, allowed: &str) -> syn::Result<()> {
    let key = key_name(meta);
    let hint = closest(&key, allowed)
        .map(|k| format!(" (did you mean `{k}`?)"))
        .unwrap_or_default();
    cx.error_spanned_by(&meta.path, format!("unknown {what} key `{key}`{hint}; expected one of: {allowed}"));
    skip_value(meta)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            cur.push((prev[j] + usize::from(ca != *cb)).min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// A value that must name a function: a plain path (`my_fn`, `module::my_fn`). Anything else
/// (a closure, a call, a literal) is reported at the value, saying what to write instead.
fn fn_path(cx: &mut Ctxt, value: Expr, key: &str, signature: &str) -> Option<Path> {
    match value {
        Expr::Path(p) if p.qself.is_none() && p.attrs.is_empty() => Some(p.path),
        other => {
            cx.error_spanned_by(
                &other,
                format!("`{key}` takes the name of a function `{signature}`, e.g. `{key} = my_fn`; closures and other expressions are not accepted, move the code into a `fn`"),
            );
            None
        }
    }
}

/// Parses `= my_fn` (see [`fn_path`]).
fn parse_fn_path(cx: &mut Ctxt, meta: &ParseNestedMeta, key: &str, signature: &str) -> syn::Result<Option<Path>> {
    let value: Expr = meta.value()?.parse()?;
    Ok(fn_path(cx, value, key, signature))
}

/// Parses `= true` / `= false`; anything else is reported at the value.
fn parse_bool(cx: &mut Ctxt, meta: &ParseNestedMeta, key: &str) -> syn::Result<Option<LitBool>> {
    match meta.value()?.parse::<Expr>()? {
        Expr::Lit(ExprLit { lit: Lit::Bool(b), .. }) => Ok(Some(b)),
        other => {
            cx.error_spanned_by(&other, format!("`{key}` takes `true` or `false`, e.g. `{key} = true`"));
            Ok(None)
        }
    }
}

/// Parses `= <integer literal>`; anything else is reported at the value.
fn parse_int(cx: &mut Ctxt, meta: &ParseNestedMeta, key: &str, example: &str) -> syn::Result<Option<LitInt>> {
    match meta.value()?.parse::<Expr>()? {
        Expr::Lit(ExprLit { lit: Lit::Int(i), .. }) => Ok(Some(i)),
        other => {
            let unit = if key.ends_with("_ms") { " of milliseconds" } else { "" };
            cx.error_spanned_by(
                &other,
                format!("`{key}` takes a non-negative integer literal{unit}, e.g. `{key} = {example}`"),
            );
            Ok(None)
        }
    }
}

/// Stores `value` unless it was refused (already reported).
fn set_some<T>(cx: &mut Ctxt, meta: &ParseNestedMeta, slot: &mut Option<T>, value: Option<T>) {
    if let Some(v) = value {
        set(cx, meta, slot, v);
    }
}

/// Parses `#[tool(...)]`, recording every problem in `cx`.
pub fn parse(cx: &mut Ctxt, args: TokenStream) -> ToolAttrs {
    let mut attrs = ToolAttrs::default();
    let parser = syn::meta::parser(|meta| parse_top(cx, &mut attrs, meta));
    if let Err(e) = syn::parse::Parser::parse2(parser, args) {
        cx.syn_error(e);
    }
    attrs
}

fn parse_top(cx: &mut Ctxt, a: &mut ToolAttrs, meta: ParseNestedMeta) -> syn::Result<()> {
    let Some(key) = meta.path.get_ident().map(Ident::to_string) else {
        return unknown(cx, &meta, "`#[tool]`", TOP_KEYS);
    };
    match key.as_str() {
        "id" => {
            let v = meta.value()?.parse()?;
            set(cx, &meta, &mut a.id, v)
        }
        "description" => {
            let v = meta.value()?.parse()?;
            set(cx, &meta, &mut a.description, v)
        }
        "title" => {
            let v = meta.value()?.parse()?;
            set(cx, &meta, &mut a.title, v)
        }
        "strict" => {
            if meta.input.peek(Token![=]) {
                let value: Expr = meta.value()?.parse()?;
                let fix = match &value {
                    Expr::Lit(ExprLit { lit: Lit::Bool(b), .. }) if !b.value => "leave `strict` out, tools are not strict by default",
                    _ => "write `strict` alone to turn it on",
                };
                let path = &meta.path;
                cx.error_spanned_by(
                    quote::quote!(#path = #value),
                    format!("`strict` is a flag and takes no value: {fix}"),
                );
                return Ok(());
            }
            set(cx, &meta, &mut a.strict, syn::spanned::Spanned::span(&meta.path))
        }
        "require_approval" => {
            let value = if meta.input.peek(Token![=]) {
                match meta.value()?.parse::<Expr>()? {
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
                }
            } else {
                Some(Approval::Always)
            };
            set_some(cx, &meta, &mut a.require_approval, value)
        }
        "to_model_output" => {
            let v = parse_fn_path(cx, &meta, "to_model_output", "fn(&Output) -> ModelOutput")?;
            set_some(cx, &meta, &mut a.to_model_output, v)
        }
        "suspend" => {
            let v = meta.value()?.parse()?;
            set(cx, &meta, &mut a.suspend, v)
        }
        "resume" => {
            let v = meta.value()?.parse()?;
            set(cx, &meta, &mut a.resume, v)
        }
        "context" => {
            let v = meta.value()?.parse()?;
            set(cx, &meta, &mut a.context, v)
        }
        "on_input_start" | "on_input_delta" | "on_input_available" | "on_output" => {
            let (slot, signature) = match key.as_str() {
                "on_input_start" => (&mut a.on_input_start, "fn(&ToolCallInfo)"),
                "on_input_delta" => (&mut a.on_input_delta, "fn(&ToolCallInfo, &str)"),
                "on_input_available" => (&mut a.on_input_available, "fn(&ToolCallInfo, &Input)"),
                _ => (&mut a.on_output, "fn(&ToolCallInfo, &Output)"),
            };
            let v = parse_fn_path(cx, &meta, &key, signature)?;
            set_some(cx, &meta, slot, v)
        }
        "input_examples" => {
            let arr: ExprArray = meta.value()?.parse()?;
            set(cx, &meta, &mut a.input_examples, arr.elems.into_iter().collect())
        }
        "transform" => {
            if a.display.is_some() || a.transcript.is_some() {
                cx.error_spanned_by(
                    &meta.path,
                    "duplicate key `transform`: put `display(...)` and `transcript(...)` in one `transform(...)`",
                );
                return skip_value(&meta);
            }
            meta.parse_nested_meta(|inner| {
                let target = inner.path.get_ident().map(Ident::to_string).unwrap_or_default();
                let slot = match target.as_str() {
                    "display" => &mut a.display,
                    "transcript" => &mut a.transcript,
                    _ => return unknown(cx, &inner, "transform target", "display, transcript"),
                };
                let mut t = Transforms::default();
                inner.parse_nested_meta(|phase| parse_phase(cx, &mut t, phase))?;
                set(cx, &inner, slot, t);
                Ok(())
            })?;
        }
        "mcp" => {
            let mut m = Mcp::default();
            meta.parse_nested_meta(|inner| parse_mcp(cx, &mut m, inner))?;
            set(cx, &meta, &mut a.mcp, m)
        }
        "provider_options" => {
            let mut opts: Vec<(Ident, Expr)> = Vec::new();
            meta.parse_nested_meta(|inner| {
                let Some(name) = inner.path.get_ident().cloned() else {
                    return Err(inner.error("provider names are plain identifiers, e.g. `provider_options(anthropic = json!({...}))`"));
                };
                let value: Expr = inner.value()?.parse()?;
                if opts.iter().any(|(n, _)| *n == name) {
                    cx.error_spanned_by(
                        &name,
                        format!("duplicate provider `{name}` in `provider_options`: merge its options into one value"),
                    );
                } else {
                    opts.push((name, value));
                }
                Ok(())
            })?;
            set(cx, &meta, &mut a.provider_options, opts)
        }
        "tags" => {
            let arr: ExprArray = meta.value()?.parse()?;
            let mut tags: Vec<LitStr> = Vec::new();
            for elem in arr.elems {
                match elem {
                    Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(lit), ..
                    }) => {
                        let tag = lit.value();
                        if tag.is_empty() || !tag.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/')) {
                            cx.error_spanned_by(
                                &lit,
                                format!("invalid tag `{tag}`: use 1 or more characters from a-z, A-Z, 0-9, `-`, `_`, `.`, `/`"),
                            );
                        } else if tags.iter().any(|t| t.value() == tag) {
                            cx.error_spanned_by(&lit, format!("duplicate tag `{tag}`"));
                        } else {
                            tags.push(lit);
                        }
                    }
                    other => cx.error_spanned_by(other, "tags are string literals: `tags = [\"weather\", \"read-only\"]`"),
                }
            }
            set(cx, &meta, &mut a.tags, tags)
        }
        "background" => {
            // `background`, `background()` and `background(enabled = true, ...)` all opt in.
            let mut b = Background::default();
            if meta.input.peek(syn::token::Paren) {
                let content;
                syn::parenthesized!(content in meta.input);
                let tokens: proc_macro2::TokenStream = content.parse()?;
                if !tokens.is_empty() {
                    syn::parse::Parser::parse2(syn::meta::parser(|inner| parse_background(cx, &mut b, inner)), tokens)?;
                }
            }
            set(cx, &meta, &mut a.background, b)
        }
        _ => return unknown(cx, &meta, "`#[tool]`", TOP_KEYS),
    }
    Ok(())
}

fn parse_phase(cx: &mut Ctxt, t: &mut Transforms, meta: ParseNestedMeta) -> syn::Result<()> {
    let key = meta.path.get_ident().map(Ident::to_string).unwrap_or_default();
    let (slot, signature) = match key.as_str() {
        "input" => (&mut t.input, "fn(&Input) -> Value"),
        "input_delta" => (&mut t.input_delta, "fn(&str) -> Value"),
        "output" => (&mut t.output, "fn(&Output) -> Value"),
        "error" => (&mut t.error, "fn(&ToolError) -> Value"),
        "approval" => (&mut t.approval, "fn(&Input) -> Value"),
        "suspend" => (&mut t.suspend, "fn(&Suspend) -> Value"),
        "resume" => (&mut t.resume, "fn(&Resume) -> Value"),
        _ => return unknown(cx, &meta, "transform phase", PHASES),
    };
    let v = parse_fn_path(cx, &meta, &key, signature)?;
    set_some(cx, &meta, slot, v);
    Ok(())
}

fn parse_mcp(cx: &mut Ctxt, m: &mut Mcp, meta: ParseNestedMeta) -> syn::Result<()> {
    let key = meta.path.get_ident().map(Ident::to_string).unwrap_or_default();
    match key.as_str() {
        "title" => {
            let v = meta.value()?.parse()?;
            set(cx, &meta, &mut m.title, v)
        }
        "meta" => {
            let v = meta.value()?.parse()?;
            set(cx, &meta, &mut m.meta, v)
        }
        "read_only_hint" | "destructive_hint" | "idempotent_hint" | "open_world_hint" => {
            let v = parse_bool(cx, &meta, &key)?;
            let slot = match key.as_str() {
                "read_only_hint" => &mut m.read_only_hint,
                "destructive_hint" => &mut m.destructive_hint,
                "idempotent_hint" => &mut m.idempotent_hint,
                _ => &mut m.open_world_hint,
            };
            set_some(cx, &meta, slot, v)
        }
        _ => return unknown(cx, &meta, "`mcp(...)`", MCP_KEYS),
    }
    Ok(())
}

fn parse_background(cx: &mut Ctxt, b: &mut Background, meta: ParseNestedMeta) -> syn::Result<()> {
    let key = meta.path.get_ident().map(Ident::to_string).unwrap_or_default();
    match key.as_str() {
        "enabled" => {
            let v = parse_bool(cx, &meta, "enabled")?;
            set_some(cx, &meta, &mut b.enabled, v)
        }
        "timeout_ms" | "max_retries" | "wait_timeout_ms" => {
            let (slot, example) = match key.as_str() {
                "timeout_ms" => (&mut b.timeout_ms, "30_000"),
                "max_retries" => (&mut b.max_retries, "3"),
                _ => (&mut b.wait_timeout_ms, "500"),
            };
            let v = parse_int(cx, &meta, &key, example)?;
            set_some(cx, &meta, slot, v)
        }
        _ => return unknown(cx, &meta, "`background(...)`", BACKGROUND_KEYS),
    }
    Ok(())
}
