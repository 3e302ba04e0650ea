//! The `toolsmith` command line ([`tool_core::cli`]) with remote MCP servers imported: every
//! command (`list`, `schema`, `catalog`, `call`, `serve`, …) sees the tools linked into the
//! binary plus those of each `--import-mcp NAME=TARGET` server, as `NAME_<tool>`, so one
//! `toolsmith serve` can put several MCP servers behind one endpoint (with Toolsmith's
//! validation, approval, views and limits in front of them).
//!
//! Owns [`run`], [`run_from`] and the parsing of `NAME=TARGET`: a `TARGET` that starts with
//! `http://` or `https://` is a Streamable HTTP endpoint; anything else is a command line (split
//! as a POSIX shell would, without running a shell) started as a child process speaking MCP on
//! its stdio. An imported server's `list_changed` keeps its tools in step while the command
//! runs (a long `serve` follows the remote set).
//!
//! ```text
//! toolsmith --import-mcp 'fs=npx -y @modelcontextprotocol/server-filesystem /srv/data' list
//! toolsmith --import-mcp crm=https://crm.internal.example/mcp serve --http 127.0.0.1:8931
//! COMPOSIO_API_KEY=… toolsmith --provider composio --provider-tools composio=GITHUB_CREATE_ISSUE list
//! ```
//!
//! Remote catalogs (`--provider composio|arcade`, [`remote`]) join the same way.

mod error;
pub mod login;
pub mod providers;
pub mod remote;

pub use error::ImportingCliError;

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use tool_core::Registry;
use tool_core::cli::{Cli, Command, GlobalArgs, execute};
use tool_core::credentials::{CredentialStore, MemoryCredentials};
use tool_core::pins::{MemoryPins, PinStore};

use crate::mcp::McpToolProvider;

/// `toolsmith` with `--import-mcp`.
#[derive(Debug, Parser)]
#[command(
    name = "toolsmith",
    about = "List, inspect, export, call and serve the tools linked into this binary and those of imported MCP servers",
    version
)]
pub struct ImportingCli {
    /// Import every tool of an MCP server as `NAME_<tool>` (repeatable).
    ///
    /// `NAME=COMMAND [ARGS…]` starts the command as a child process speaking MCP on its stdio
    /// (split like a shell would, not run by one); `NAME=http://…` or `NAME=https://…` connects
    /// over Streamable HTTP. NAME is letters, digits, `_` and `-`.
    #[arg(long = "import-mcp", value_name = "NAME=TARGET", global = true, help_heading = "MCP imports")]
    import_mcp: Vec<String>,
    /// Bearer token for imported HTTP server NAME, read from variable VAR.
    ///
    /// Sent as `Authorization: Bearer <token>`; the token is never taken from the command line,
    /// where other users of the machine could read it. Repeat for several servers.
    #[arg(
        long = "import-mcp-token-env",
        value_name = "NAME=VAR",
        global = true,
        help_heading = "MCP imports"
    )]
    import_mcp_token_env: Vec<String>,
    /// Log in to an imported OAuth server when it needs the user, there and then.
    ///
    /// A scope the login lacks (step-up), a new authorization server, a login that can no
    /// longer be refreshed or none at all: the authorization URL is printed on standard error
    /// (and opened in the browser, unless `--interactive-login=print`), the login is stored as
    /// `mcp login` would, and the refused request is sent again. Without this flag such a
    /// request fails naming the `mcp login` to run, which is what a program running
    /// `toolsmith` needs.
    #[arg(
        long = "interactive-login",
        value_name = "HOW",
        global = true,
        help_heading = "MCP imports",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "browser",
        value_parser = ["browser", "print"]
    )]
    interactive_login: Option<String>,
    #[command(flatten)]
    providers: remote::ProviderArgs,
    #[command(flatten)]
    global: GlobalArgs,
    #[command(subcommand)]
    command: Top,
}

/// The commands: tool-core's, plus `providers`.
#[derive(Debug, Subcommand)]
enum Top {
    #[command(flatten)]
    Core(Command),
    /// Check the remote catalogs, list their tools, manage connections.
    ///
    /// The remote catalogs: without a subcommand, each configured provider and whether it
    /// answers; `tools NAME` lists its tools; `connect`, `connections` and `revoke` manage a
    /// user's connections.
    #[command(after_long_help = PROVIDERS_EXAMPLES)]
    Providers(providers::ProvidersCommand),
    /// Log in to OAuth-protected MCP servers for `--import-mcp`, or log out.
    #[command(after_long_help = login::LOGIN_EXAMPLES)]
    Mcp(login::McpCommand),
}

/// The examples at the end of `toolsmith providers --help`.
const PROVIDERS_EXAMPLES: &str = "Examples:
  COMPOSIO_API_KEY=… toolsmith providers
  toolsmith providers tools composio --toolkit gmail --search send
  toolsmith providers connect composio gmail --user user-1 --wait 120
  toolsmith providers connections composio gmail --user user-1
  toolsmith providers revoke composio ca_123";

/// One `--import-mcp` value, understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Import {
    /// A child process: the program and its arguments.
    Stdio {
        /// The server's name (the tools' id prefix without its `_`).
        name: String,
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
    },
    /// A Streamable HTTP endpoint.
    Http {
        /// The server's name.
        name: String,
        /// The endpoint URL.
        url: String,
    },
}

impl Import {
    /// Reads `NAME=TARGET`; the error ([`ImportingCliError::Usage`]) says what is wrong with it.
    pub fn parse(value: &str) -> Result<Import, ImportingCliError> {
        let bad = |why: String| ImportingCliError::Usage(format!("`--import-mcp {value}`: {why}"));
        let Some((name, target)) = value.split_once('=') else {
            return Err(bad("expected NAME=TARGET (a command line or an http(s):// URL)".into()));
        };
        let name = name.trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(bad(format!(
                "the name `{name}` must be letters, digits, `_` or `-` (it prefixes the tool ids)"
            )));
        }
        let target = target.trim();
        let lower = target.get(..8).unwrap_or(target).to_ascii_lowercase();
        if lower.starts_with("http://") || lower.starts_with("https://") {
            return Ok(Import::Http {
                name: name.to_owned(),
                url: target.to_owned(),
            });
        }
        let words = shlex::split(target).ok_or_else(|| bad("the command has an unclosed quote or a trailing backslash".into()))?;
        let mut words = words.into_iter();
        let program = words.next().ok_or_else(|| bad("no command or URL after `=`".into()))?;
        Ok(Import::Stdio {
            name: name.to_owned(),
            program,
            args: words.collect(),
        })
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        match self {
            Import::Stdio { name, .. } | Import::Http { name, .. } => name,
        }
    }

    /// The provider for it, its tools named `NAME_<tool>` and mirrored into `registry`; an HTTP
    /// server uses `token`, or the login stored in `logins` for it.
    fn provider(&self, registry: &Arc<Registry>, token: Option<String>, logins: Option<&Arc<dyn CredentialStore>>) -> McpToolProvider {
        let provider = match self {
            Import::Stdio { name, program, args } => McpToolProvider::stdio(name.clone(), program.clone(), args.clone()),
            Import::Http { name, url } => {
                let provider = McpToolProvider::http(name.clone(), url.clone());
                match (token, logins) {
                    (Some(token), _) => provider.bearer_token(token),
                    (None, Some(store)) => provider.oauth(store.clone(), login::login_command(name, url)),
                    (None, None) => provider,
                }
            }
        };
        provider.tool_prefix(format!("{}_", self.name())).sync_into(registry.clone())
    }
}

/// Parses the process arguments and runs (see the [module docs](self)).
pub fn run() -> ExitCode {
    run_from(std::env::args_os())
}

/// Parses the given arguments (the first is the program name) and runs against the linked
/// tools plus the imported ones, writing to standard output and standard error.
pub fn run_from<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    tool_core::cli::run_parsed(args, |parsed: ImportingCli, mut out| async move {
        execute_importing(parsed, &mut out).await
    })
}

/// Connects the imported servers and the remote catalogs, runs the command against the linked
/// tools plus theirs, and closes the servers; an error says what went wrong (its `Display` is
/// the message `toolsmith` prints).
pub async fn execute_importing(parsed: ImportingCli, out: &mut dyn Write) -> Result<ExitCode, ImportingCliError> {
    execute_importing_with_env(parsed, &|name| std::env::var(name).ok(), out).await
}

/// [`execute_importing`], reading environment variables (API keys, tokens) through `env`.
pub async fn execute_importing_with_env(
    parsed: ImportingCli,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut dyn Write,
) -> Result<ExitCode, ImportingCliError> {
    let mut flags = parsed.providers;
    if let Top::Providers(p) = &parsed.command {
        // A provider named by the subcommand is configured with its defaults when not given.
        if let Some(name) = p.provider_name().map(str::to_ascii_lowercase)
            && !flags.provider.contains(&name)
        {
            flags.provider.push(name);
        }
    }
    // Logs from the start: connecting the imported servers and logging in log too.
    let serving = matches!(parsed.command, Top::Core(Command::Serve(_)));
    let _log = parsed.global.init_logging(serving);
    let selected = flags.build(env)?;
    let command = match parsed.command {
        Top::Providers(p) => return providers::run(p, &selected, out).await,
        Top::Mcp(m) => return login::run(m, &parsed.global, env, out).await,
        Top::Core(command) => command,
    };
    let imports = parsed.import_mcp.iter().map(|v| Import::parse(v)).collect::<Result<Vec<_>, _>>()?;
    let mut names = std::collections::BTreeSet::new();
    if let Some(twice) = imports.iter().find(|i| !names.insert(i.name().to_ascii_lowercase())) {
        return Err(ImportingCliError::Usage(format!(
            "`--import-mcp`: the name `{}` is used twice",
            twice.name()
        )));
    }
    let mut tokens = tokens_from_env(&parsed.import_mcp_token_env, &imports, env)?;
    // Without a credential file, an empty store: a 401 still names the login command (with
    // `--interactive-login`, the file is made: a login may be stored).
    let logins = match imports.iter().any(|i| matches!(i, Import::Http { .. })) {
        true => Some(
            login::credential_store(&parsed.global, parsed.interactive_login.is_some())
                .await?
                .unwrap_or_else(|| Arc::new(MemoryCredentials::default())),
        ),
        false => None,
    };
    let interactive = parsed.interactive_login.as_deref().map(|how| {
        // On standard error: standard output is the command's answer.
        let show = |url: &str| eprintln!("Open this URL to log in to the imported MCP server:\n{url}");
        crate::mcp::oauth::InteractiveLogin::new(how == "browser", std::time::Duration::from_secs(300), show)
    });
    let registry = Arc::new(error::linked_registry()?);
    let pins: Arc<dyn PinStore> = match parsed.global.pin_store().await? {
        Some(store) => store,
        None => Arc::new(MemoryPins::default()),
    };
    remote::resolve_into(&selected, &registry, &pins).await?;
    let mut providers = Vec::new();
    let mut outcome = Ok(());
    for import in &imports {
        let taken: std::collections::BTreeSet<String> = registry.ids().into_iter().collect();
        let mut provider = import
            .provider(&registry, tokens.remove(&import.name().to_ascii_lowercase()), logins.as_ref())
            .pin_in(pins.clone());
        if let Some(how) = &interactive {
            provider = provider.interactive_login(how.clone());
        }
        if let Err(source) = provider.connect().await {
            outcome = Err(ImportingCliError::ProviderAt {
                at: format!("`--import-mcp {}`", import.name()),
                source,
            });
            break;
        }
        let clash: Vec<String> = provider
            .tools()
            .iter()
            .map(|t| format!("{}_{}", import.name(), t.name))
            .filter(|id| taken.contains(id))
            .collect();
        providers.push(provider);
        if !clash.is_empty() {
            outcome = Err(ImportingCliError::Usage(format!(
                "`--import-mcp {}`: these tool ids are taken already: {}",
                import.name(),
                clash.join(", ")
            )));
            break;
        }
    }
    let result = match outcome {
        Ok(()) => Ok(execute(Cli::new(parsed.global, command), registry, out).await?),
        Err(e) => Err(e),
    };
    for provider in providers {
        provider.close().await;
    }
    result
}

/// The bearer token of each `--import-mcp-token-env NAME=VAR`, by lower-case NAME: VAR must be
/// set and NAME an HTTP import.
fn tokens_from_env(
    values: &[String],
    imports: &[Import],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<std::collections::BTreeMap<String, String>, ImportingCliError> {
    let mut tokens = std::collections::BTreeMap::new();
    for value in values {
        let bad = |why: String| ImportingCliError::Usage(format!("`--import-mcp-token-env {value}`: {why}"));
        let (name, var) = value
            .split_once('=')
            .map(|(n, v)| (n.trim(), v.trim()))
            .ok_or_else(|| bad("expected NAME=VAR".into()))?;
        match imports.iter().find(|i| i.name().eq_ignore_ascii_case(name)) {
            Some(Import::Http { .. }) => {}
            Some(Import::Stdio { .. }) => return Err(bad(format!("`{name}` is a command, not an HTTP server"))),
            None => return Err(bad(format!("no `--import-mcp {name}=…`"))),
        }
        let token = env(var)
            .filter(|t| !t.trim().is_empty())
            .ok_or_else(|| bad(format!("the variable `{var}` is not set (or empty)")))?;
        if tokens.insert(name.to_ascii_lowercase(), token).is_some() {
            return Err(bad(format!("`{name}` has a token already")));
        }
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn import_values() {
        assert_eq!(
            Import::parse("fs=npx -y '@mcp/server fs' /tmp").unwrap(),
            Import::Stdio {
                name: "fs".into(),
                program: "npx".into(),
                args: vec!["-y".into(), "@mcp/server fs".into(), "/tmp".into()],
            }
        );
        assert_eq!(
            Import::parse("crm = HTTPS://crm.example/mcp").unwrap(),
            Import::Http {
                name: "crm".into(),
                url: "HTTPS://crm.example/mcp".into(),
            }
        );
        for (bad, why) in [
            ("no-equals", "expected NAME=TARGET"),
            ("=cmd", "must be letters"),
            ("a b=cmd", "must be letters"),
            ("x=", "no command or URL"),
            ("x=run 'open", "unclosed quote"),
        ] {
            let e = Import::parse(bad).unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }
}
