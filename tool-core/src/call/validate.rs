//! Validation of one call against its tool's schemas, with forgiveness.
//!
//! Owns the checks, against a tool's [`Compiled`] validators, of arguments (with the repairs models commonly need), request context, suspension
//! payload, resume data and output. Argument text keeps one value per key (a repeated key is
//! refused, never resolved), and a `strict` tool accepts only the fields its schema lists
//! (`closed`). Every failure is a model-readable [`ToolError`] naming each failing path;
//! values are quoted redacted (under secret-named keys) and bounded. It runs nothing.

use jsonschema::Validator;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::sync::Arc;

use super::CallArgs;
use super::closed::closed;
use super::compiled::Compiled;
use super::redact::{QUOTE_LIMIT, REDACTED, path_has_secret, quote, quote_text};
use crate::error::{ErrorKind, Issue, ToolError};
use crate::json::{DuplicateKey, Node, bounded, locate_duplicate, parse_unique};
use crate::tool::{Decoded, Tool, ToolInput};

fn parse_value(tool: &str, text: &str) -> Result<Value, ToolError> {
    serde_json::from_str(text).map_err(|e| {
        ToolError::invalid(
            ErrorKind::InvalidInput,
            format!(
                "Tool `{tool}` received arguments that are not valid JSON ({e}). Provided arguments: {}",
                quote_text(text)
            ),
            vec![Issue {
                path: String::new(),
                message: e.to_string(),
            }],
        )
        .for_tool(tool)
    })
}

/// Input after validation: the argument text itself when it was valid as sent (with the
/// tool's own input type decoded from it, when that is what showed it valid), the value as the
/// caller gave it when it was valid as given (borrowed: copied only for a call that outlives
/// it; with its text and the input decoded from it, which is what a run receives), or a value
/// (repaired, or owned).
pub(crate) enum Validated<'a> {
    Text(&'a str),
    Decoded(&'a str, Decoded),
    // The value itself is read only by the runtime (a call that outlives the borrow).
    #[cfg_attr(not(feature = "runtime"), allow(dead_code))]
    Given(&'a Value, String, Decoded),
    Value(Value),
}

impl Validated<'_> {
    pub(crate) fn as_input(&self) -> ToolInput<'_> {
        match self {
            Validated::Text(t) => ToolInput::Text(t),
            Validated::Decoded(t, decoded) => ToolInput::Decoded(t, decoded),
            Validated::Given(_, text, decoded) => ToolInput::Decoded(text, decoded),
            Validated::Value(v) => ToolInput::Value(v),
        }
    }
}

/// Arguments whose text repeats a key: which and where (I-JSON, RFC 7493).
fn duplicate_key(tool: &str, duplicate: &DuplicateKey) -> ToolError {
    ToolError::invalid(
        ErrorKind::InvalidInput,
        format!("Tool `{tool}` refused its arguments: {duplicate}."),
        vec![Issue {
            path: duplicate.member_path(),
            message: duplicate.to_string(),
        }],
    )
    .for_tool(tool)
}

/// Validates arguments: text is checked on a borrowed tree and, when valid, handed on as is;
/// anything else goes through the value path, which repairs what it can and explains the rest.
/// Text that repeats a key is refused (the tree's parse fails on it, and only then is the
/// text read again to say where). For a tool whose type enforces its schema, text that
/// decodes into that type and surely repeats no key is valid as it is; anything else takes
/// the validator's path, so a refusal lists every failing path as always; so does a value
/// (arguments an MCP request carries) that decodes into that type.
pub(crate) fn validate_args<'a>(
    tool: &dyn Tool,
    compiled: &Compiled,
    args: &'a CallArgs<'_>,
    surely_unique: bool,
) -> Result<Validated<'a>, ToolError> {
    let id = tool.spec().id.as_str();
    match args {
        CallArgs::Text(text) => {
            let text = trimmed(text);
            if text.is_empty() || text == "null" {
                return validate_input(id, compiled, Value::Null).map(Validated::Value);
            }
            if compiled.input_implied()
                && surely_unique
                && let Some(Some(decoded)) = crate::tool::hints(tool).and_then(|h| h.decode_input(text))
            {
                return Ok(Validated::Decoded(text, decoded));
            }
            let tool = id;
            match Node::parse(text) {
                Ok(tree) if compiled.validators()?.input.fast.is_valid(&tree) => return Ok(Validated::Text(text)),
                Ok(_) => {}
                Err(_) => {
                    if let Some(duplicate) = locate_duplicate(text.as_bytes()) {
                        return Err(duplicate_key(tool, &duplicate));
                    }
                }
            }
            validate_input(tool, compiled, parse_value(tool, text)?).map(Validated::Value)
        }
        CallArgs::Value(value) => {
            // A value repeats no key: an object that decodes into the tool's type is valid.
            if compiled.input_implied()
                && value.is_object()
                && let Some(Some((text, decoded))) = crate::tool::hints(tool).and_then(|h| h.value_decodes(value))
            {
                return Ok(Validated::Given(value, text, decoded));
            }
            validate_input(id, compiled, value.clone()).map(Validated::Value)
        }
    }
}

/// `text` without surrounding whitespace; text that starts and ends with ASCII that is not
/// whitespace (a model's usual `{…}`) is returned as is without a scan of either end.
fn trimmed(text: &str) -> &str {
    let plain = |b: Option<&u8>| b.is_some_and(|&b| b.is_ascii() && !char::from(b).is_whitespace());
    match plain(text.as_bytes().first()) && plain(text.as_bytes().last()) {
        true => text,
        false => text.trim(),
    }
}

/// The longest an issue's message runs (the schema's own words, such as an `enum`'s values,
/// are not the caller's and may be long; every value the caller sent is bounded before this).
const ISSUE_LIMIT: usize = 2000;

/// Every failure of `value` against `validator`, one issue per path. Values are quoted
/// bounded and redacted; a value under a secret-named key is not quoted at all.
fn issues_of(validator: &Validator, value: &Value) -> Vec<Issue> {
    use jsonschema::error::ValidationErrorKind as K;
    validator
        .iter_errors(value)
        .map(|e| {
            let path = e.instance_path().as_str().to_owned();
            let message = match e.kind() {
                K::AdditionalProperties { unexpected } | K::UnevaluatedProperties { unexpected } => unknown_fields(unexpected),
                _ if path_has_secret(&path) => e.masked_with(REDACTED).to_string(),
                _ => e.masked_with(quote(e.instance())).to_string(),
            };
            let message = bounded(&message, ISSUE_LIMIT).into_owned();
            Issue { path, message }
        })
        .collect()
}

/// The schema a call's arguments are judged by: the input schema, closed for a strict tool (it
/// accepts the fields its schema lists and no others).
pub(crate) fn accepted_input(spec: &crate::spec::ToolSpec) -> std::borrow::Cow<'_, Value> {
    if spec.policy.strict {
        std::borrow::Cow::Owned(closed(&spec.schemas.input))
    } else {
        std::borrow::Cow::Borrowed(&spec.schemas.input)
    }
}

/// The message for fields a closed object does not accept, each named (bounded).
fn unknown_fields(names: &[String]) -> String {
    const NAMED: usize = 10;
    let mut list = names
        .iter()
        .take(NAMED)
        .map(|n| format!("`{}`", bounded(n, QUOTE_LIMIT)))
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > NAMED {
        list.push_str(&format!(" and {} more", names.len() - NAMED));
    }
    let noun = if names.len() == 1 { "field" } else { "fields" };
    format!("unknown {noun} {list}: this object accepts only the fields its schema lists; remove it or check its spelling")
}

/// Repairs what models commonly get wrong, guided by the validation errors: an object or
/// array sent as a JSON string is parsed; a `null` for a field is dropped (absent).
fn forgive(value: &mut Value, validator: &Validator) -> bool {
    let paths: Vec<String> = validator
        .iter_errors(value)
        .map(|e| e.instance_path().as_str().to_owned())
        .collect();
    let mut changed = false;
    for path in paths {
        if path.is_empty() {
            continue;
        }
        match value.pointer(&path) {
            Some(Value::String(s)) => {
                let t = s.trim_start();
                if (t.starts_with('{') || t.starts_with('['))
                    && let Ok(parsed @ (Value::Object(_) | Value::Array(_))) = parse_unique(s.as_bytes())
                    && let Some(slot) = value.pointer_mut(&path)
                {
                    *slot = parsed;
                    changed = true;
                }
            }
            Some(Value::Null) => {
                let (parent, key) = path.rsplit_once('/').unwrap_or(("", &path));
                if let Some(Value::Object(obj)) = value.pointer_mut(parent) {
                    let key = key.replace("~1", "/").replace("~0", "~");
                    changed |= obj.remove(&key).is_some();
                }
            }
            _ => {}
        }
    }
    changed
}

/// Removes every `null` member of every object (a strict-mode `null` means "absent").
fn drop_nulls(value: &mut Value) -> bool {
    match value {
        Value::Object(obj) => {
            let before = obj.len();
            obj.retain(|_, v| !v.is_null());
            let mut changed = obj.len() != before;
            for v in obj.values_mut() {
                changed |= drop_nulls(v);
            }
            changed
        }
        Value::Array(items) => items.iter_mut().fold(false, |changed, v| drop_nulls(v) | changed),
        _ => false,
    }
}

/// Parses every string that holds a JSON object or array (a structure sent as a string).
fn parse_json_strings(value: &mut Value) -> bool {
    match value {
        Value::String(s) => {
            let t = s.trim_start();
            if !(t.starts_with('{') || t.starts_with('[')) {
                return false;
            }
            match parse_unique(s.as_bytes()) {
                Ok(parsed @ (Value::Object(_) | Value::Array(_))) => {
                    *value = parsed;
                    true
                }
                _ => false,
            }
        }
        Value::Object(obj) => obj.values_mut().fold(false, |changed, v| parse_json_strings(v) | changed),
        Value::Array(items) => items.iter_mut().fold(false, |changed, v| parse_json_strings(v) | changed),
        _ => false,
    }
}

fn format_issues(issues: &[Issue]) -> String {
    issues
        .iter()
        .map(|i| format!("\n- {}: {}", if i.path.is_empty() { "(root)" } else { &i.path }, i.message))
        .collect()
}

/// Validates (and if needed repairs) arguments; the error names every failing path.
pub(crate) fn validate_input(tool: &str, compiled: &Compiled, mut value: Value) -> Result<Value, ToolError> {
    if value.is_null() {
        value = Value::Object(Map::new());
    }
    let input = compiled.validators()?.input.value(tool)?;
    if input.is_valid(&value) {
        return Ok(value);
    }
    let original = issues_of(input, &value);
    let provided = quote(&value);
    let mut repaired = value;
    for _ in 0..4 {
        if !forgive(&mut repaired, input) {
            break;
        }
        if input.is_valid(&repaired) {
            return Ok(repaired);
        }
    }
    // A failure inside a union (`anyOf` of an optional struct) reports the union's path, not
    // the field's: as a last resort, repair the whole document and keep it only if it is valid.
    for deep in [drop_nulls as fn(&mut Value) -> bool, parse_json_strings] {
        if deep(&mut repaired) && input.is_valid(&repaired) {
            return Ok(repaired);
        }
    }
    Err(ToolError::invalid(
        ErrorKind::InvalidInput,
        format!(
            "Tool `{tool}` received invalid arguments:{}\nProvided arguments: {provided}",
            format_issues(&original)
        ),
        original,
    )
    .for_tool(tool))
}

/// The JSON type of a value, for messages that must not quote it.
fn type_of(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(_) => "a boolean".into(),
        Value::Number(_) => "a number".into(),
        Value::String(s) => format!("a string ({} characters)", s.chars().count()),
        Value::Array(items) => format!("an array ({} items)", items.len()),
        Value::Object(_) => "an object".into(),
    }
}

/// Validates the request context; values are quoted redacted as in every error, and a context
/// that is not an object (it has no keys to judge secrets by) is not quoted at all.
pub(crate) fn validate_context(tool: &str, compiled: &Compiled, context: Option<Value>) -> Result<Arc<Map<String, Value>>, ToolError> {
    let value = match context {
        // The common call: no context, no schema for one (no map made, none dropped).
        None | Some(Value::Null) if !compiled.has_context() => return Ok(super::empty_context()),
        None | Some(Value::Null) => return validate_context_map(tool, compiled, Map::new()).map(super::shared_context),
        Some(Value::Object(map)) => map,
        Some(other) => {
            return Err(ToolError::with_kind(
                ErrorKind::InvalidContext,
                format!(
                    "Tool `{tool}`: the request context must be a JSON object, got {} (not shown)",
                    type_of(&other)
                ),
            )
            .for_tool(tool));
        }
    };
    validate_context_map(tool, compiled, value).map(super::shared_context)
}

/// Checks an object request context against the tool's context schema.
fn validate_context_map(tool: &str, compiled: &Compiled, map: Map<String, Value>) -> Result<Map<String, Value>, ToolError> {
    let mut value = Value::Object(map);
    if let Some(validator) = &compiled.validators()?.context
        && !validator.is_valid(&value)
    {
        let issues = issues_of(validator, &value);
        return Err(ToolError::invalid(
            ErrorKind::InvalidContext,
            format!(
                "Tool `{tool}` received an invalid request context:{}\nProvided context: {}",
                format_issues(&issues),
                quote(&value)
            ),
            issues,
        )
        .for_tool(tool));
    }
    Ok(value.as_object_mut().map(std::mem::take).unwrap_or_default())
}

/// Checks a suspension's payload against the tool's `suspend` schema; a payload that does not
/// match is an output error (the tool broke its own contract).
pub(crate) fn validate_suspension(tool: &str, compiled: &Compiled, payload: &Value) -> Result<(), ToolError> {
    let Some(validator) = &compiled.validators()?.suspend else {
        return Ok(());
    };
    if validator.is_valid(payload) {
        return Ok(());
    }
    let issues = issues_of(validator, payload);
    Err(ToolError::invalid(
        ErrorKind::InvalidOutput,
        format!(
            "Tool `{tool}` suspended with a payload that does not match its suspend schema:{}",
            format_issues(&issues)
        ),
        issues,
    )
    .for_tool(tool))
}

/// Checks resume data against the tool's `resume` schema (any value when it declares none).
pub(crate) fn validate_resume(tool: &str, compiled: &Compiled, data: &Value) -> Result<(), ToolError> {
    let Some(validator) = &compiled.validators()?.resume else {
        return Ok(());
    };
    if validator.is_valid(data) {
        return Ok(());
    }
    let issues = issues_of(validator, data);
    Err(ToolError::invalid(
        ErrorKind::InvalidInput,
        format!(
            "The resume data for tool `{tool}` does not match its resume schema:{}\nProvided data: {}",
            format_issues(&issues),
            quote(data)
        ),
        issues,
    )
    .for_tool(tool))
}

/// Checks a tool's output against its output schema: on `tree` when the tool serialised its
/// output into one ([`crate::json::to_tree`]: equal to the text's), else on the text parsed.
pub(crate) fn validate_output(tool: &str, compiled: &Compiled, output: &RawValue, tree: Option<&Node<'_>>) -> Result<(), ToolError> {
    let Some(pair) = &compiled.validators()?.output else {
        return Ok(());
    };
    let valid = match tree {
        Some(tree) => pair.fast.is_valid(tree),
        None => Node::parse(output.get()).is_ok_and(|tree| pair.fast.is_valid(&tree)),
    };
    if valid {
        return Ok(());
    }
    let value: Value = serde_json::from_str(output.get()).unwrap_or(Value::Null);
    let issues = issues_of(pair.value(tool)?, &value);
    if issues.is_empty() {
        // The tree refuses a repeated key; an output is the tool's own serialisation (a
        // flattened map may repeat a field), judged as `serde_json` reads it, as before.
        return Ok(());
    }
    Err(ToolError::invalid(
        ErrorKind::InvalidOutput,
        format!(
            "Tool `{tool}` returned output that does not match its output schema:{}",
            format_issues(&issues)
        ),
        issues,
    )
    .for_tool(tool))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::context::{BoxFuture, ToolCallInfo};
    use crate::spec::ToolSpec;
    use crate::tool::ToolOutput;

    #[test]
    fn argument_text_is_trimmed_of_any_whitespace_and_plain_text_is_kept() {
        for (text, want) in [
            ("{}", "{}"),
            (" {} ", "{}"),
            ("\n\t{\"a\": 1}\r\n", "{\"a\": 1}"),
            ("\u{0b}{}\u{0c}", "{}"),
            ("\u{a0}{}\u{2003}", "{}"),
            ("", ""),
            ("   ", ""),
            ("é", "é"),
        ] {
            assert_eq!(trimmed(text), want, "{text:?}");
        }
    }

    /// A tool whose input type (`{"n": u32}`) answers `decode_input` when `vouched`.
    struct Counted {
        spec: ToolSpec,
        vouched: bool,
    }

    impl Tool for Counted {
        fn spec(&self) -> &ToolSpec {
            &self.spec
        }
        fn execute(
            &self,
            _: ToolInput<'_>,
            _: Arc<Map<String, Value>>,
            _: ToolCallInfo,
        ) -> BoxFuture<'static, Result<ToolOutput, ToolError>> {
            Box::pin(std::future::ready(Ok(ToolOutput::new(Value::Null))))
        }
        fn shortcuts(&self) -> Option<crate::tool::Shortcuts<'_>> {
            Some(crate::tool::Shortcuts::of(self))
        }
    }

    impl crate::tool::Hints for Counted {
        fn decode_input(&self, text: &str) -> Option<Option<Decoded>> {
            #[derive(serde::Deserialize)]
            struct In {
                #[allow(dead_code)]
                n: u32,
            }
            self.vouched.then(|| serde_json::from_str::<In>(text).ok().map(Decoded::new))
        }
    }

    fn tool(vouched: bool) -> Counted {
        let schema =
            json!({"type": "object", "properties": {"n": {"type": "integer", "format": "uint32", "minimum": 0}}, "required": ["n"]});
        Counted {
            spec: ToolSpec::new("counted", "Counts", schema),
            vouched,
        }
    }

    /// Arguments through the limits' pass, then validated, as a registry does.
    fn checked<'a>(tool: &Counted, compiled: &Compiled, args: &'a CallArgs<'_>) -> Result<Validated<'a>, ToolError> {
        let unique = super::super::check_limits("counted", args, &super::super::Limits::default(), compiled.input_implied())?;
        validate_args(tool, compiled, args, unique)
    }

    #[test]
    fn the_skip_is_taken_only_for_a_vouched_type_and_keeps_what_it_decoded() {
        let (vouched, other) = (Arc::new(tool(true)), Arc::new(tool(false)));
        let (vouched_compiled, other_compiled) = (Compiled::new(vouched.clone()), Compiled::new(other.clone()));
        assert!(vouched_compiled.input_implied() && !other_compiled.input_implied());
        let args = CallArgs::from(r#"{"n": 3}"#);
        // The vouched type decoded the text: the validator did not run, the run takes the value.
        assert!(matches!(checked(&vouched, &vouched_compiled, &args), Ok(Validated::Decoded(..))));
        assert!(matches!(checked(&other, &other_compiled, &args), Ok(Validated::Text(_))));
        // A repeated key or text that does not decode takes the validator's path and its listing.
        let repeated = CallArgs::from(r#"{"n": 3, "n": 4}"#);
        assert!(checked(&vouched, &vouched_compiled, &repeated).is_err());
        let wrong = CallArgs::from(r#"{"n": -1}"#);
        let err = checked(&vouched, &vouched_compiled, &wrong).err().unwrap();
        assert_eq!(err.issues()[0].path, "/n", "{err}");
    }

    /// A wrapper that forwards everything, hints included, to the tool it holds: optionally
    /// with a spec of its own.
    struct Forwarding {
        inner: Counted,
        spec: Option<ToolSpec>,
    }

    impl Tool for Forwarding {
        fn spec(&self) -> &ToolSpec {
            self.spec.as_ref().unwrap_or(&self.inner.spec)
        }
        fn execute(
            &self,
            i: ToolInput<'_>,
            c: Arc<Map<String, Value>>,
            call: ToolCallInfo,
        ) -> BoxFuture<'static, Result<ToolOutput, ToolError>> {
            self.inner.execute(i, c, call)
        }
        fn shortcuts(&self) -> Option<crate::tool::Shortcuts<'_>> {
            self.inner.shortcuts()
        }
    }

    #[test]
    fn hints_forwarded_by_a_wrapper_are_not_taken() {
        let plain = tool(true);
        assert_eq!(crate::tool::decodes(&plain, r#"{"n": 3}"#), Some(true), "the tool's own hints");
        // The wrapper's spec says more than the inner type enforces: the inner hints do not hold.
        let stricter = json!({"type": "object", "properties": {"n": {"type": "integer", "maximum": 2}}, "required": ["n"]});
        for spec in [None, Some(ToolSpec::new("counted", "Counts", stricter))] {
            let wrapper = Forwarding { inner: tool(true), spec };
            assert_eq!(crate::tool::decodes(&wrapper, r#"{"n": 3}"#), None);
            let compiled = Compiled::new(Arc::new(wrapper));
            assert!(!compiled.input_implied(), "a wrapper's arguments are validated");
        }
    }
}
