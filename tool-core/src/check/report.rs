//! The check's report for people: a table per tool and each failure as a ready command.

use std::fmt::Write as _;

use super::{CheckReport, Failure};

impl Failure {
    /// The `toolsmith call` command that repeats this failure (arguments and context quoted
    /// for a POSIX shell).
    pub fn command(&self, tool: &str) -> String {
        let mut command = format!("toolsmith call {} {}", shell_quote(tool), shell_quote(&self.input.to_string()));
        if self.context.as_object().is_some_and(|c| !c.is_empty()) {
            let _ = write!(command, " --context {}", shell_quote(&self.context.to_string()));
        }
        command
    }
}

/// The report as a table: one line per tool (cases run, failures by kind, or why it was
/// skipped), then each failure with its case, what the call answered and the command.
pub fn render_table(report: &CheckReport) -> String {
    let width = report.tools.iter().map(|t| t.id.len()).max().unwrap_or(4).max(4);
    let mut out = format!("{:<width$}  {:>6}  {:<8}  {}\n", "tool", "cases", "result", "details");
    for tool in &report.tools {
        let (result, details) = match (&tool.skipped, tool.failures.is_empty()) {
            (Some(why), _) => ("skipped", why.clone()),
            (None, true) if tool.unmade > 0 => ("ok", format!("{} valid inputs could not be made", tool.unmade)),
            (None, true) => ("ok", String::new()),
            (None, false) => {
                let kinds: Vec<&str> = tool.failures.iter().map(|f| f.kind.as_str()).collect();
                ("FAILED", kinds.join(", "))
            }
        };
        let _ = writeln!(out, "{:<width$}  {:>6}  {:<8}  {}", tool.id, tool.cases, result, details);
    }
    for tool in report.tools.iter().filter(|t| !t.failures.is_empty()) {
        for failure in &tool.failures {
            let _ = writeln!(
                out,
                "\n{} {}: {}\n  case:   {}\n  answer: {}\n  repeat: {}",
                tool.id,
                failure.kind.as_str(),
                describe(failure.kind),
                failure.case,
                bounded(&failure.detail),
                bounded(&failure.command(&tool.id)),
            );
        }
    }
    out
}

fn describe(kind: super::FailureKind) -> &'static str {
    use super::FailureKind::*;
    match kind {
        ValidInputRefused => "the schema accepts this input but the call refused it (the schema and the Rust type disagree)",
        InvalidInputAccepted => "the schema refuses this input but it reached the function",
        Panicked => "the function panicked",
        Hung => "the call ran past the time limit",
        InvalidOutput => "the output does not match the output schema",
        UnreadableError => "an error without a message",
        SecretInError => "an error repeats a secret of the request context",
        ExampleFailed => "an input example fails",
        SchemaDoesNotCompile => "a schema of the tool does not compile: every call of it is refused",
    }
}

/// Text cut to 2,000 characters, with its length when cut (a huge input stays readable).
fn bounded(text: &str) -> String {
    const MAX: usize = 2_000;
    match text.char_indices().nth(MAX) {
        Some((at, _)) => format!("{}… ({} characters)", &text[..at], text.chars().count()),
        None => text.to_owned(),
    }
}

/// `text` in single quotes for a POSIX shell.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::FailureKind;
    use super::*;

    #[test]
    fn a_failure_repeats_as_a_shell_command() {
        let failure = Failure {
            kind: FailureKind::Panicked,
            case: "valid input".into(),
            input: json!({"q": "it's"}),
            context: json!({"root": "/tmp/x"}),
            detail: "panic: boom".into(),
        };
        assert_eq!(
            failure.command("json-query"),
            r#"toolsmith call 'json-query' '{"q":"it'\''s"}' --context '{"root":"/tmp/x"}'"#
        );
    }
}
