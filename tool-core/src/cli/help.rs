//! What the command line says about itself: the name it is run as (in every hint that names a
//! command to run), the examples at the end of each command's long help, shell completions, the
//! man page, and the Markdown reference the guide carries.

use std::fmt::Write as _;
use std::io::Write;

use clap::ValueEnum;

/// The name hints give the command line: the file name the binary was run as (`my-agent` for a
/// user's own binary), `toolsmith` when it is not known (a command line driven through
/// [`super::execute`] alone).
pub fn bin_name() -> &'static str {
    crate::error::operator()
}

/// Records the name the process was run as, from its first argument (kept when already set).
pub(super) fn set_bin_name(argv0: Option<&std::ffi::OsStr>) {
    let name = argv0
        .and_then(|a| std::path::Path::new(a).file_stem())
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty());
    if let Some(name) = name {
        crate::error::set_operator(name.to_owned());
    }
}

/// `text` with each command it names (`` `toolsmith …` ``, `check`'s `repeat: toolsmith call …`
/// and the `"toolsmith call …"` of its JSON report) named as the binary is run instead.
pub(super) fn as_run(text: &str) -> String {
    match bin_name() {
        "toolsmith" => text.to_owned(),
        name => text
            .replace("`toolsmith ", &format!("`{name} "))
            .replace("repeat: toolsmith ", &format!("repeat: {name} "))
            .replace("\"toolsmith call ", &format!("\"{name} call ")),
    }
}

/// The shells `toolsmith completions` writes a script for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    /// Bash.
    Bash,
    /// Zsh.
    Zsh,
    /// Fish.
    Fish,
}

/// Writes `shell`'s completion script of `command` (the whole command line, with every option
/// an extending command line adds) for the binary as it is run.
pub(super) fn completions(shell: Shell, command: &mut clap::Command, out: &mut dyn Write) -> std::io::Result<()> {
    let shell = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    let mut script = Vec::new();
    clap_complete::generate(shell, command, bin_name(), &mut script);
    out.write_all(&script)
}

/// Writes the man page of `command` (roff), named as the binary is run.
pub(super) fn man(command: clap::Command, out: &mut dyn Write) -> std::io::Result<()> {
    clap_mangen::Man::new(command.name(bin_name()).bin_name(bin_name())).render(out)
}

/// The reference of a command line as Markdown: for the command and each subcommand (depth
/// first), its usage, its long help, and each option under its heading with its long help,
/// default and accepted values. The guide's CLI reference is this text for `toolsmith`, so it
/// is regenerated rather than written (a test fails when the committed copy differs).
pub fn reference(command: &clap::Command) -> String {
    let mut command = command.clone();
    command.build();
    let mut out = String::new();
    section(&mut out, &command, &[]);
    out
}

fn section(out: &mut String, command: &clap::Command, parents: &[&str]) {
    let mut path: Vec<&str> = parents.to_vec();
    path.push(command.get_name());
    let title = path.join(" ");
    let depth = path.len().min(4) + 1;
    let _ = writeln!(out, "{} `{title}`\n", "#".repeat(depth));
    if let Some(about) = command.get_long_about().or(command.get_about()) {
        let _ = writeln!(out, "{}\n", about.to_string().trim());
    }
    let usage = command.clone().render_usage().to_string();
    let usage = usage.trim().trim_start_matches("Usage:").trim();
    let _ = writeln!(out, "```text\n{usage}\n```\n");
    let positionals: Vec<&clap::Arg> = command.get_positionals().filter(|a| !a.is_hide_set()).collect();
    if !positionals.is_empty() {
        let _ = writeln!(out, "Arguments:\n");
        for arg in positionals {
            let name = arg
                .get_value_names()
                .and_then(|v| v.first())
                .map(|s| s.to_string())
                .unwrap_or_else(|| arg.get_id().to_string().to_uppercase());
            let _ = writeln!(out, "- `{name}`: {}", help_of(arg));
        }
        out.push('\n');
    }
    // Options by heading, in the order clap shows them; the global ones only where declared.
    let mut headings: Vec<Option<&str>> = Vec::new();
    let own: Vec<&clap::Arg> = command
        .get_arguments()
        .filter(|a| !a.is_positional() && !a.is_hide_set() && (!a.is_global_set() || parents.is_empty()))
        .filter(|a| !matches!(a.get_id().as_str(), "help" | "version"))
        .collect();
    for arg in &own {
        if !headings.contains(&arg.get_help_heading()) {
            headings.push(arg.get_help_heading());
        }
    }
    for heading in headings {
        let _ = writeln!(out, "{}:\n", heading.unwrap_or("Options"));
        for arg in own.iter().filter(|a| a.get_help_heading() == heading) {
            let _ = writeln!(out, "- {}: {}", flag_of(arg), help_of(arg));
        }
        out.push('\n');
    }
    if let Some(after) = command.get_after_long_help() {
        let _ = writeln!(out, "```text\n{}\n```\n", after.to_string().trim());
    }
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help") {
        section(out, sub, &path);
    }
}

fn flag_of(arg: &clap::Arg) -> String {
    let mut flag = match (arg.get_short(), arg.get_long()) {
        (Some(s), Some(l)) => format!("`-{s}`, `--{l}`"),
        (None, Some(l)) => format!("`--{l}`"),
        (Some(s), None) => format!("`-{s}`"),
        (None, None) => format!("`{}`", arg.get_id()),
    };
    if arg.get_action().takes_values()
        && let Some(names) = arg.get_value_names()
    {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let _ = write!(flag, " `{}`", names.join(" "));
    }
    flag
}

fn help_of(arg: &clap::Arg) -> String {
    let help = arg.get_long_help().or(arg.get_help()).map(|h| h.to_string()).unwrap_or_default();
    let mut text = help.trim().replace("\n\n", " ").replace('\n', " ");
    if !text.is_empty() && !text.ends_with(['.', ')', '`']) {
        text.push('.');
    }
    let values: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| format!("`{}`", v.get_name()))
        .collect();
    if !values.is_empty() && arg.get_action().takes_values() {
        let _ = write!(text, " Values: {}.", values.join(", "));
    }
    let defaults: Vec<String> = arg.get_default_values().iter().map(|v| v.to_string_lossy().into_owned()).collect();
    if !defaults.is_empty() && arg.get_action().takes_values() {
        let _ = write!(text, " Default: `{}`.", defaults.join(" "));
    }
    if let Some(env) = arg.get_env() {
        let _ = write!(text, " Environment: `{}`.", env.to_string_lossy());
    }
    text
}

/// The examples at the end of each command's long help (`toolsmith COMMAND --help`).
pub(super) mod examples {
    pub const LIST: &str = "Examples:
  toolsmith list
  toolsmith list --json";
    pub const SCHEMA: &str = "Examples:
  toolsmith schema weather-tool";
    pub const CATALOG: &str = "Examples:
  toolsmith catalog --format openai
  toolsmith catalog --format anthropic --tag weather --out tools.json
  toolsmith catalog --format gemini --gemini-schema openapi
  toolsmith catalog --format toolsmith --name crm --catalog-version 1.2.0
  toolsmith catalog --format openai-responses --tool-search native --defer-all-except weather-tool --namespace files=files
  toolsmith catalog --format openai-responses --allowed-tools --defer-all-except weather-tool --loaded calculate";
    pub const CALL: &str = "Examples:
  toolsmith call add '{\"a\": 1, \"b\": 2}'
  toolsmith call weather-tool '{\"location\": \"Oslo\"}' --as anthropic
  toolsmith call write-file '{\"path\": \"a.txt\", \"content\": \"x\"}' --context '{\"root\": \"/tmp/w\"}'
  toolsmith call CALL_ID --approve
  toolsmith call CALL_ID --decline 'not today'
  toolsmith call CALL_ID --result '{\"confirmed\": true}'
  toolsmith call --stream captured.sse --format anthropic";
    pub const RESUME: &str = "Examples:
  toolsmith resume CALL_ID '{\"overwrite\": true}'
  toolsmith resume CALL_ID '{\"approved\": false, \"reason\": \"not today\"}'";
    pub const SERVE: &str = "Examples:
  toolsmith serve --stdio
  toolsmith serve --http 127.0.0.1:8931
  toolsmith serve --http 127.0.0.1:8931 --auth-token-env MCP_TOKEN
  toolsmith --store postgres://db/toolsmith serve --http 0.0.0.0:8931 --stateless --insecure-http
  toolsmith serve --http 0.0.0.0:443 --tls-cert cert.pem --tls-key key.pem \\
      --auth-issuer https://auth.example.com/ --auth-resource https://mcp.example.com/mcp";
    pub const CHECK: &str = "Examples:
  toolsmith check
  toolsmith check json-query --cases 500 --seed 7 --json
  toolsmith check --include-side-effects --context '{\"root\": \"/tmp/sandbox\"}'";
    pub const PENDING: &str = "Examples:
  toolsmith pending
  toolsmith pending --json --token 600";
    pub const STORE: &str = "Examples:
  toolsmith store status
  toolsmith store migrate --store postgres://db/toolsmith
  toolsmith store expire --older-than 7d";
    pub const TASKS: &str = "Examples:
  toolsmith tasks list
  toolsmith tasks get task_… --json
  toolsmith tasks cancel task_…";
    pub const PINS: &str = "Examples:
  toolsmith pins list
  toolsmith pins diff mcp fx_echo
  toolsmith pins accept mcp fx_echo";
    pub const RECEIPTS: &str = "Examples:
  toolsmith receipts list
  toolsmith receipts clear order-42
  toolsmith receipts clear --digest 6dc6…";
    pub const AUDIT: &str = "Examples:
  toolsmith audit list
  toolsmith audit list --since 24h --call CALL_ID --json";
    pub const COMPLETIONS: &str = "Examples:
  toolsmith completions bash > ~/.local/share/bash-completion/completions/toolsmith
  toolsmith completions zsh > ~/.zfunc/_toolsmith
  toolsmith completions fish > ~/.config/fish/completions/toolsmith.fish";
    pub const MAN: &str = "Examples:
  toolsmith man > toolsmith.1 && man -l toolsmith.1";
}
