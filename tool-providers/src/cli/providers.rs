//! `toolsmith providers`: the remote catalogs themselves: which are configured and whether they
//! answer, their tools page by page, and a user's connections (connect, list, revoke).
//!
//! Owns the `providers` subcommand and its printing. The providers are the ones the
//! `--provider` flags describe ([`remote`](super::remote)); a subcommand that names one that was
//! not given adds it with its defaults (its key still from the environment).

use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};
use serde_json::json;
use tool_core::provider::{AuthStatus, AuthorizeOptions, ListConnectionsOptions, ListToolsOptions, ToolProvider};

use super::ImportingCliError;
use super::remote::Selected;

/// The arguments of `providers`.
#[derive(Debug, Args)]
pub struct ProvidersCommand {
    #[command(subcommand)]
    action: Option<Action>,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// List a provider's tools, a page at a time.
    Tools {
        /// The provider (`composio` or `arcade`).
        name: String,
        /// Only this toolkit.
        #[arg(long)]
        toolkit: Option<String>,
        /// Only tools matching this text.
        #[arg(long)]
        search: Option<String>,
        /// The page (1-based).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
        page: u32,
        /// Tools per page.
        #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..=100))]
        per_page: u32,
    },
    /// Start connecting a user's account of TOOLKIT: print the link.
    ///
    /// Start connecting a user's account of TOOLKIT: prints the authorization link; with
    /// `--wait SECONDS`, waits for the user to finish.
    Connect {
        /// The provider.
        name: String,
        /// The toolkit (`gmail`, `Github`, …).
        toolkit: String,
        /// Whose account it becomes.
        #[arg(long)]
        user: String,
        /// Wait up to this many seconds for the authorization to complete.
        #[arg(long, value_name = "SECONDS")]
        wait: Option<u64>,
    },
    /// List a user's connections of TOOLKIT.
    Connections {
        /// The provider.
        name: String,
        /// The toolkit.
        toolkit: String,
        /// Whose connections.
        #[arg(long)]
        user: String,
    },
    /// Revoke a connection.
    Revoke {
        /// The provider.
        name: String,
        /// The connection's id.
        connection_id: String,
    },
}

impl ProvidersCommand {
    /// The provider the subcommand names, if it names one (it must be configured).
    pub fn provider_name(&self) -> Option<&str> {
        match self.action.as_ref()? {
            Action::Tools { name, .. } | Action::Connect { name, .. } | Action::Connections { name, .. } | Action::Revoke { name, .. } => {
                Some(name)
            }
        }
    }
}

fn io(e: std::io::Error) -> ImportingCliError {
    ImportingCliError::Output(e)
}

fn find<'a>(selected: &'a [Selected], name: &str) -> Result<&'a dyn ToolProvider, ImportingCliError> {
    selected
        .iter()
        .find(|s| s.name.eq_ignore_ascii_case(name))
        .map(|s| &*s.provider)
        .ok_or_else(|| ImportingCliError::NotFound(format!("no provider `{name}` (composio or arcade)")))
}

/// Runs `providers …` against the configured providers.
pub async fn run(command: ProvidersCommand, selected: &[Selected], out: &mut dyn Write) -> Result<ExitCode, ImportingCliError> {
    match command.action {
        None => health(selected, out).await,
        Some(Action::Tools {
            name,
            toolkit,
            search,
            page,
            per_page,
        }) => {
            let options = ListToolsOptions {
                toolkit,
                search,
                page: Some(page),
                per_page: Some(per_page),
            };
            let listed = find(selected, &name)?
                .list_tools(options)
                .await
                .map_err(|source| ImportingCliError::ProviderAt { at: name.clone(), source })?;
            for tool in &listed.data {
                let toolkit = tool.toolkit.as_deref().unwrap_or("-");
                let description = tool.description.as_deref().unwrap_or_default().lines().next().unwrap_or_default();
                writeln!(out, "{:36}  {:12}  {description}", tool.slug, toolkit).map_err(io)?;
            }
            if let Some(p) = &listed.pagination {
                writeln!(out, "{}", serde_json::to_string(p).unwrap_or_default()).map_err(io)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(Action::Connect { name, toolkit, user, wait }) => connect(find(selected, &name)?, &toolkit, &user, wait, out).await,
        Some(Action::Connections { name, toolkit, user }) => {
            let options = ListConnectionsOptions {
                toolkit,
                user_id: Some(user),
                ..ListConnectionsOptions::default()
            };
            let listed = find(selected, &name)?
                .list_connections(options)
                .await
                .map_err(|source| ImportingCliError::ProviderAt { at: name.clone(), source })?;
            for c in &listed.items {
                let status = serde_json::to_value(c.status).unwrap_or_default();
                writeln!(out, "{:28}  {}", c.connection_id, status.as_str().unwrap_or("?")).map_err(io)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(Action::Revoke { name, connection_id }) => {
            find(selected, &name)?
                .revoke_connection(&connection_id)
                .await
                .map_err(|source| ImportingCliError::ProviderAt { at: name.clone(), source })?;
            writeln!(out, "revoked {connection_id}").map_err(io)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Every configured provider and whether it answers; fails when one does not.
async fn health(selected: &[Selected], out: &mut dyn Write) -> Result<ExitCode, ImportingCliError> {
    if selected.is_empty() {
        return Err(ImportingCliError::Usage(
            "no provider is configured: add `--provider composio` or `--provider arcade`".into(),
        ));
    }
    let mut all_ok = true;
    for s in selected {
        let (ok, message) = match s.provider.get_health().await {
            Ok(h) => (h.ok, h.message.unwrap_or_else(|| if h.ok { "ok".into() } else { "not ok".into() })),
            Err(e) => (false, e.to_string()),
        };
        all_ok &= ok;
        let line = json!({"provider": s.name, "ok": ok, "message": message});
        writeln!(out, "{line}").map_err(io)?;
    }
    Ok(if all_ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// Starts an authorization and prints its link; with `wait`, polls until it ends.
async fn connect(
    provider: &dyn ToolProvider,
    toolkit: &str,
    user: &str,
    wait: Option<u64>,
    out: &mut dyn Write,
) -> Result<ExitCode, ImportingCliError> {
    let options = AuthorizeOptions {
        toolkit: toolkit.to_owned(),
        connection_id: user.to_owned(),
        ..AuthorizeOptions::default()
    };
    let authorization = provider.authorize(options).await?;
    writeln!(out, "open this link to connect {toolkit} for {user}: {}", authorization.url).map_err(io)?;
    out.flush().map_err(io)?;
    let Some(seconds) = wait else {
        return Ok(ExitCode::SUCCESS);
    };
    let deadline = Instant::now() + Duration::from_secs(seconds);
    loop {
        match provider.get_auth_status(&authorization.auth_id).await? {
            AuthStatus::Completed => {
                writeln!(out, "connected").map_err(io)?;
                return Ok(ExitCode::SUCCESS);
            }
            AuthStatus::Failed => {
                return Err(ImportingCliError::Authorization(format!(
                    "the authorization of {toolkit} for {user} failed"
                )));
            }
            AuthStatus::Pending if Instant::now() >= deadline => {
                return Err(ImportingCliError::Authorization(format!(
                    "the authorization of {toolkit} for {user} did not complete within {seconds} s"
                )));
            }
            AuthStatus::Pending => tokio::time::sleep(Duration::from_millis(500)).await,
        }
    }
}
