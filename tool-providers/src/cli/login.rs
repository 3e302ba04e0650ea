//! `toolsmith mcp login NAME URL` and `toolsmith mcp logout NAME`: OAuth logins to MCP servers
//! that `--import-mcp NAME=URL` then uses, kept in the credential file next to the SQLite store
//! (owner-only, integrity-tagged) or in a PostgreSQL store's database (see
//! [`tool_core::credentials`]).
//!
//! Owns the `mcp` subcommand, where the credential store is, and the command that logs in
//! again (named as the binary is run). The logins themselves are [`crate::mcp::oauth`]'s.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Subcommand};
use tool_core::cli::GlobalArgs;
use tool_core::credentials::{CredentialStore, SqliteCredentials};
use tool_core::runtime::{PostgresStore, SqliteStore, StoreLocation};

use super::ImportingCliError;
use crate::mcp::oauth::{self, Login, LoginMethod};

/// The arguments of `mcp`.
#[derive(Debug, Args)]
pub struct McpCommand {
    #[command(subcommand)]
    action: McpAction,
}

#[derive(Debug, Subcommand)]
enum McpAction {
    /// Log in to an OAuth-protected MCP server for `--import-mcp NAME=URL`.
    ///
    /// Prints the authorization URL (and opens it in a browser unless `--no-browser`), waits for
    /// the authorization server to redirect to `http://127.0.0.1:PORT/callback`, and stores the
    /// tokens with the store (next to a SQLite file, in a PostgreSQL database), where
    /// `--import-mcp NAME=URL` finds and refreshes them.
    /// `--client-credentials` logs a machine in without a browser, `--jwt-bearer-assertion-file`
    /// a workload with its platform's identity token, `--enterprise-id-token-file` a user with
    /// an enterprise identity provider's ID token.
    #[command(after_long_help = LOGIN_EXAMPLES)]
    Login(LoginArgs),
    /// Remove the stored login of NAME.
    Logout {
        /// The import's name.
        name: String,
    },
}

/// The examples at the end of `mcp --help` and `mcp login --help`.
pub(super) const LOGIN_EXAMPLES: &str = "Examples:
  toolsmith mcp login linear https://mcp.linear.app/mcp
  toolsmith mcp login crm https://crm.internal.example/mcp --no-browser
  CRM_SECRET=… toolsmith mcp login crm https://crm.internal.example/mcp --client-credentials \\
      --client-id toolsmith-ci --client-secret-env CRM_SECRET
  toolsmith mcp login crm https://crm.internal.example/mcp \\
      --jwt-bearer-assertion-file /var/run/secrets/tokens/crm-token
  toolsmith --import-mcp crm=https://crm.internal.example/mcp list
  toolsmith mcp logout crm";

#[derive(Debug, Args)]
struct LoginArgs {
    /// The import's name (as in `--import-mcp NAME=URL`).
    name: String,
    /// The MCP server's Streamable HTTP endpoint.
    url: String,
    /// Print the authorization URL and wait, without opening a browser.
    #[arg(long)]
    no_browser: bool,
    /// Fetch the authorization URL itself and follow it (for servers that approve unattended).
    ///
    /// For authorization servers that approve without a person (test and conformance setups):
    /// the URL is fetched and its redirects followed to the loopback callback, as a browser
    /// would.
    #[arg(long, conflicts_with = "client_credentials")]
    follow_authorization_url: bool,
    /// The loopback port of the redirect (default: any free port).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// A scope to ask for (repeatable; default: as the server asks).
    #[arg(long = "scope", value_name = "SCOPE")]
    scopes: Vec<String>,
    /// The client id registered beforehand (default: metadata document or registration).
    #[arg(long, value_name = "ID")]
    client_id: Option<String>,
    /// Read the client secret from variable VAR (never from the command line).
    #[arg(long, value_name = "VAR", conflicts_with = "client_secret_file")]
    client_secret_env: Option<String>,
    /// Read the client secret from FILE (its first line).
    #[arg(long, value_name = "FILE")]
    client_secret_file: Option<PathBuf>,
    /// HTTPS URL of this client's metadata document (used where the server accepts one).
    #[arg(long, value_name = "URL")]
    client_metadata_url: Option<String>,
    /// Log in as a machine with the client-credentials grant (needs --client-id, a secret or key).
    #[arg(long, requires = "client_id")]
    client_credentials: bool,
    /// Sign a client assertion with the private key in FILE (PEM) instead of sending a secret.
    ///
    /// `private_key_jwt` (RFC 7523): an EC P-256 key signs with ES256, an RSA key with RS256. The
    /// key is stored with the login, like a secret; it is never taken from the command line.
    #[arg(long, value_name = "FILE", requires = "client_credentials", conflicts_with_all = ["client_secret_env", "client_secret_file"])]
    client_key_file: Option<PathBuf>,
    /// The JWT bearer logins' options (boxed: most logins have none).
    #[command(flatten)]
    jwt: Box<JwtArgs>,
    /// How long to wait for the authorization, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    timeout: u64,
}

/// The options of the JWT bearer logins (workload identity, enterprise-managed authorization).
#[derive(Debug, Args)]
struct JwtArgs {
    /// Log in with the JWT bearer grant, presenting the JWT in FILE (workload identity).
    ///
    /// RFC 7523 §2.1: a JWT your platform issued for the authorization server (a Kubernetes
    /// service account token, a CI or cloud identity token) is the grant. The file is read again
    /// whenever a new token is needed, so a platform that rotates it is followed; the JWT is
    /// never stored nor shown. With `--client-id` (and a secret) for a registered client.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["client_credentials", "follow_authorization_url", "enterprise_id_token_file"])]
    jwt_bearer_assertion_file: Option<PathBuf>,
    /// Log in with your enterprise identity provider's ID token in FILE (enterprise-managed).
    ///
    /// SEP-990: the ID token is exchanged at the identity provider (`--idp-issuer`, as the
    /// client `--idp-client-id`) for an identity assertion grant (RFC 8693 token exchange), which
    /// the JWT bearer grant presents to the MCP server's authorization server, as `--client-id`
    /// with its secret. The file is read again for every new token.
    #[arg(long, value_name = "FILE", requires_all = ["idp_issuer", "idp_client_id", "client_id"], conflicts_with_all = ["client_credentials", "follow_authorization_url"])]
    enterprise_id_token_file: Option<PathBuf>,
    /// The issuer URL of the enterprise identity provider (with --enterprise-id-token-file).
    #[arg(long, value_name = "URL", requires = "enterprise_id_token_file")]
    idp_issuer: Option<String>,
    /// This client's id at the enterprise identity provider (with --enterprise-id-token-file).
    #[arg(long, value_name = "ID", requires = "enterprise_id_token_file")]
    idp_client_id: Option<String>,
}

/// The command that logs in to `url` as `name`, as the binary is run.
pub(crate) fn login_command(name: &str, url: &str) -> String {
    format!("{} mcp login {name} {url}", tool_core::cli::bin_name())
}

/// The credential store for `global`'s store: the file next to a SQLite store (`create`: made
/// when missing, for a login; else `None` when there is none), or a PostgreSQL store's table.
pub(crate) async fn credential_store(global: &GlobalArgs, create: bool) -> Result<Option<Arc<dyn CredentialStore>>, ImportingCliError> {
    let store = match global.store_location() {
        Some(StoreLocation::Sqlite(file)) => file.clone(),
        Some(StoreLocation::Postgres(url)) => {
            let store = PostgresStore::connect(url)
                .await
                .map_err(|e| ImportingCliError::Core(tool_core::cli::CliError::Store(e)))?;
            return Ok(Some(Arc::new(store.credentials())));
        }
        None => match SqliteStore::default_path() {
            Some(path) => path,
            None if create => {
                return Err(ImportingCliError::Usage(
                    "no data directory is known: set TOOLSMITH_DATA_DIR or pass --store".into(),
                ));
            }
            None => return Ok(None),
        },
    };
    if !create && !SqliteCredentials::path_next_to(&store).exists() {
        return Ok(None);
    }
    if create
        && global.store_location().is_none()
        && let Some(dir) = store.parent()
    {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder
            .create(dir)
            .map_err(|e| ImportingCliError::Usage(format!("cannot create the data directory {}: {e}", dir.display())))?;
    }
    let opened = SqliteCredentials::open_next_to(&store).map_err(oauth::OAuthError::from)?;
    Ok(Some(Arc::new(opened)))
}

/// The client secret from `--client-secret-env` or `--client-secret-file`.
fn secret(args: &LoginArgs, env: &dyn Fn(&str) -> Option<String>) -> Result<Option<String>, ImportingCliError> {
    if let Some(var) = &args.client_secret_env {
        let value = env(var).filter(|v| !v.trim().is_empty());
        return value
            .map(|v| Some(v.trim().to_owned()))
            .ok_or_else(|| ImportingCliError::Usage(format!("`--client-secret-env {var}`: the variable is not set (or empty)")));
    }
    if let Some(file) = &args.client_secret_file {
        let text = std::fs::read_to_string(file)
            .map_err(|e| ImportingCliError::Usage(format!("`--client-secret-file {}`: {e}", file.display())))?;
        let line = text.lines().next().unwrap_or_default().trim().to_owned();
        if line.is_empty() {
            return Err(ImportingCliError::Usage(format!(
                "`--client-secret-file {}` is empty",
                file.display()
            )));
        }
        return Ok(Some(line));
    }
    Ok(None)
}

/// Runs `mcp login` or `mcp logout`.
pub(super) async fn run(
    command: McpCommand,
    global: &GlobalArgs,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut dyn Write,
) -> Result<ExitCode, ImportingCliError> {
    let store = credential_store(global, true)
        .await?
        .ok_or_else(|| ImportingCliError::Usage("no credential store".into()))?;
    let args = match command.action {
        McpAction::Logout { name } => {
            let removed = oauth::logout(&*store, &name).await?;
            let said = match removed {
                true => format!("Logged out of `{name}`.\n"),
                false => format!("No login of `{name}` was stored.\n"),
            };
            out.write_all(said.as_bytes()).map_err(ImportingCliError::Output)?;
            return Ok(ExitCode::SUCCESS);
        }
        McpAction::Login(args) => args,
    };
    crate::cli::Import::parse(&format!("{}={}", args.name, args.url))?;
    let secret = secret(&args, env)?;
    let key = match &args.client_key_file {
        Some(file) => Some(
            std::fs::read_to_string(file).map_err(|e| ImportingCliError::Usage(format!("`--client-key-file {}`: {e}", file.display())))?,
        ),
        None => None,
    };
    let jwt_file = args
        .jwt
        .jwt_bearer_assertion_file
        .clone()
        .or(args.jwt.enterprise_id_token_file.clone());
    let method = match (args.client_credentials, secret) {
        (_, client_secret) if jwt_file.is_some() => LoginMethod::JwtBearer {
            client_id: args.client_id.clone().unwrap_or_default(),
            client_secret,
            jwt_file: jwt_file.unwrap_or_default(),
            identity_provider: match (&args.jwt.idp_issuer, &args.jwt.idp_client_id) {
                (Some(issuer), Some(client_id)) => Some(oauth::IdentityProvider {
                    issuer: issuer.clone(),
                    client_id: client_id.clone(),
                }),
                _ => None,
            },
        },
        (true, _) if key.is_some() => LoginMethod::ClientAssertion {
            client_id: args.client_id.clone().unwrap_or_default(),
            private_key_pem: key.unwrap_or_default(),
        },
        (true, None) => {
            return Err(ImportingCliError::Usage(
                "`--client-credentials` needs the secret: `--client-secret-env VAR` or `--client-secret-file FILE` (or a key: `--client-key-file FILE`)".into(),
            ));
        }
        (true, Some(client_secret)) => LoginMethod::ClientCredentials {
            client_id: args.client_id.clone().unwrap_or_default(),
            client_secret,
        },
        (false, client_secret) => LoginMethod::Browser {
            port: args.port,
            open_browser: !args.no_browser && !args.follow_authorization_url,
            follow: args.follow_authorization_url,
            client_id: args.client_id.clone(),
            client_secret,
            client_metadata_url: args.client_metadata_url.clone(),
        },
    };
    let login = Login {
        name: args.name.clone(),
        url: args.url.clone(),
        scopes: args.scopes.clone(),
        method,
        timeout: Duration::from_secs(args.timeout.max(1)),
    };
    let mut shown = Ok(());
    let logged = oauth::login(login, store, &mut |url| {
        shown = writeln!(out, "Open this URL to authorize `{}`:\n{url}", args.name).and_then(|()| out.flush());
    })
    .await?;
    shown.map_err(ImportingCliError::Output)?;
    let scopes = match logged.scopes.is_empty() {
        true => "no scope".to_owned(),
        false => logged.scopes.join(" "),
    };
    let refresh = if logged.refreshable { ", refreshable" } else { "" };
    if let Some(from) = &logged.moved_from {
        writeln!(
            out,
            "The server no longer names the authorization server {from} of the stored login: this login was made with the one it names now."
        )
        .map_err(ImportingCliError::Output)?;
    }
    writeln!(out, "Logged in to `{}` ({scopes}{refresh}).", args.name).map_err(ImportingCliError::Output)?;
    Ok(ExitCode::SUCCESS)
}
