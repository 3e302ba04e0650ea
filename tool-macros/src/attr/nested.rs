//! The keys with a value of their own shape: `transform(...)`, `mcp(...)`, `background(...)`,
//! `provider_options(...)`, `tags = [...]` and `scopes = [...]`.

use syn::meta::ParseNestedMeta;
use syn::{Expr, ExprArray, Ident, LitStr};

use super::grammar::{parse_bool, parse_fn_path, parse_int, set, set_some, skip_value, unknown};
use super::{Background, Mcp, ToolAttrs, Transforms};
use crate::ctxt::Ctxt;

const PHASES: &str = "input, input_delta, output, error, approval, suspend, resume";
const MCP_KEYS: &str = "title, read_only_hint, destructive_hint, idempotent_hint, open_world_hint, meta, requires";
/// The client capabilities a tool may require (`mcp(requires = [...])`).
const CAPABILITIES: [&str; 3] = ["elicitation", "roots", "sampling"];
const BACKGROUND_KEYS: &str = "enabled, required, asks_first, timeout_ms, max_retries, wait_timeout_ms";

/// `transform(display(phase = f, ...), transcript(...))`.
pub fn transform(cx: &mut Ctxt, a: &mut ToolAttrs, meta: &ParseNestedMeta) -> syn::Result<()> {
    if a.display.is_some() || a.transcript.is_some() {
        cx.error_spanned_by(
            &meta.path,
            "duplicate key `transform`: put `display(...)` and `transcript(...)` in one `transform(...)`",
        );
        return skip_value(meta);
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
    })
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

/// `mcp(title = "...", read_only_hint = true, ..., meta = json!(...))`.
pub fn mcp(cx: &mut Ctxt, a: &mut ToolAttrs, meta: &ParseNestedMeta) -> syn::Result<()> {
    let mut m = Mcp::default();
    meta.parse_nested_meta(|inner| parse_mcp(cx, &mut m, inner))?;
    set(cx, meta, &mut a.mcp, m);
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
        "requires" => {
            let words = Words {
                key: "capability",
                example: "requires = [\"sampling\"]",
                allowed: |c| c.is_ascii_lowercase(),
                rule: "one of `elicitation`, `roots`, `sampling`",
            };
            let caps = strings(cx, &meta, &words)?;
            for cap in caps.iter().filter(|c| !CAPABILITIES.contains(&c.value().as_str())) {
                cx.error_spanned_by(
                    cap,
                    format!(
                        "`{}` is not a client capability a tool can require: use `elicitation`, `roots` or `sampling`",
                        cap.value()
                    ),
                );
            }
            set(cx, &meta, &mut m.requires, caps)
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

/// `background`, `background()` and `background(enabled = true, ...)`: all opt in;
/// `background(required)` also makes the tool task-required (it never runs in the foreground).
pub fn background(cx: &mut Ctxt, a: &mut ToolAttrs, meta: &ParseNestedMeta) -> syn::Result<()> {
    let mut b = Background {
        span: Some(syn::spanned::Spanned::span(&meta.path)),
        ..Background::default()
    };
    if meta.input.peek(syn::token::Paren) {
        let content;
        syn::parenthesized!(content in meta.input);
        let tokens: proc_macro2::TokenStream = content.parse()?;
        if !tokens.is_empty() {
            syn::parse::Parser::parse2(syn::meta::parser(|inner| parse_background(cx, &mut b, inner)), tokens)?;
        }
    }
    if let (Some(_), Some(enabled)) = (b.required, b.enabled.as_ref().filter(|e| !e.value)) {
        cx.error_spanned_by(
            enabled,
            "a task-required tool (`required`) runs only in the background: remove `enabled = false`, or `required`",
        );
    }
    set(cx, meta, &mut a.background, b);
    Ok(())
}

fn parse_background(cx: &mut Ctxt, b: &mut Background, meta: ParseNestedMeta) -> syn::Result<()> {
    let key = meta.path.get_ident().map(Ident::to_string).unwrap_or_default();
    match key.as_str() {
        "enabled" => {
            let v = parse_bool(cx, &meta, "enabled")?;
            set_some(cx, &meta, &mut b.enabled, v)
        }
        // A flag: a task-required tool (MCP `taskSupport: "required"`) runs only as a task.
        "required" => super::flag(cx, &meta, &mut b.required, "leave `required` out to let clients choose")?,
        // A flag: the first run gathers the tool's input in the foreground, the resumed run is
        // the background one.
        "asks_first" => super::flag(
            cx,
            &meta,
            &mut b.asks_first,
            "leave `asks_first` out to run every round in the background",
        )?,
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

/// `provider_options(anthropic = json!(...), ...)`: one value per provider.
pub fn provider_options(cx: &mut Ctxt, a: &mut ToolAttrs, meta: &ParseNestedMeta) -> syn::Result<()> {
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
    set(cx, meta, &mut a.provider_options, opts);
    Ok(())
}

/// `tags = ["weather", "read-only"]`: distinct string literals of a safe alphabet.
pub fn tags(cx: &mut Ctxt, a: &mut ToolAttrs, meta: &ParseNestedMeta) -> syn::Result<()> {
    let tags = strings(
        cx,
        meta,
        &Words {
            key: "tag",
            example: "tags = [\"weather\", \"read-only\"]",
            allowed: |c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'),
            rule: "1 or more characters from a-z, A-Z, 0-9, `-`, `_`, `.`, `/`",
        },
    )?;
    set(cx, meta, &mut a.tags, tags);
    Ok(())
}

/// `scopes = ["crm.write"]`: distinct OAuth scope tokens (RFC 6749 §3.3: printable ASCII
/// without space, `"` and `\`), every one of which a caller's access token must grant.
pub fn scopes(cx: &mut Ctxt, a: &mut ToolAttrs, meta: &ParseNestedMeta) -> syn::Result<()> {
    let scopes = strings(
        cx,
        meta,
        &Words {
            key: "scope",
            example: "scopes = [\"crm.read\", \"crm.write\"]",
            allowed: |c| c.is_ascii_graphic() && !matches!(c, '"' | '\\'),
            rule: "1 or more printable ASCII characters other than space, `\"` and `\\`",
        },
    )?;
    set(cx, meta, &mut a.scopes, scopes);
    Ok(())
}

/// `allowed_callers = ["direct", "code_execution_20250825"]`: who may call the tool — `direct`
/// (the model), `programmatic` (code the model runs) or an Anthropic code execution version
/// (`code_execution_` and eight digits; the rule of `tool_core::spec::is_caller`).
pub fn allowed_callers(cx: &mut Ctxt, a: &mut ToolAttrs, meta: &ParseNestedMeta) -> syn::Result<()> {
    const RULE: &str = "`direct`, `programmatic` or `code_execution_` and a date (`code_execution_20250825`)";
    let callers = strings(
        cx,
        meta,
        &Words {
            key: "caller",
            example: "allowed_callers = [\"direct\", \"programmatic\"]",
            allowed: |c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_',
            rule: RULE,
        },
    )?;
    let is_caller = |s: &str| match s.strip_prefix("code_execution_") {
        Some(date) => date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit()),
        None => matches!(s, "direct" | "programmatic"),
    };
    let listed = callers.len();
    let mut known = Vec::with_capacity(listed);
    for lit in callers {
        if is_caller(&lit.value()) {
            known.push(lit);
        } else {
            cx.error_spanned_by(&lit, format!("unknown caller `{}`: use {RULE}", lit.value()));
        }
    }
    if listed == 0 {
        let path = &meta.path;
        cx.error_spanned_by(
            path,
            format!("`allowed_callers` names no caller: list {RULE}, or leave it out for the API's default"),
        );
    }
    set(cx, meta, &mut a.allowed_callers, known);
    Ok(())
}

/// What a list of words (`tags`, `scopes`) may hold.
struct Words {
    /// One word's name in messages.
    key: &'static str,
    /// The key written right, for messages.
    example: &'static str,
    allowed: fn(char) -> bool,
    /// What a word may be made of, for messages.
    rule: &'static str,
}

/// `[ "a", "b" ]`: distinct, non-empty string literals of `words`' alphabet; every mistake is
/// reported at its literal.
fn strings(cx: &mut Ctxt, meta: &ParseNestedMeta, words: &Words) -> syn::Result<Vec<LitStr>> {
    let arr: ExprArray = meta.value()?.parse()?;
    let mut out: Vec<LitStr> = Vec::new();
    let key = words.key;
    for elem in arr.elems {
        let Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(lit), ..
        }) = elem
        else {
            cx.error_spanned_by(elem, format!("{key}s are string literals: `{}`", words.example));
            continue;
        };
        let word = lit.value();
        if word.is_empty() || !word.chars().all(words.allowed) {
            cx.error_spanned_by(&lit, format!("invalid {key} `{word}`: use {}", words.rule));
        } else if out.iter().any(|t| t.value() == word) {
            cx.error_spanned_by(&lit, format!("duplicate {key} `{word}`: remove one of them"));
        } else {
            out.push(lit);
        }
    }
    Ok(out)
}
