//! `serve`: the MCP server over stdio or Streamable HTTP, until interrupted.

use std::num::NonZeroU32;
use std::process::ExitCode;
use std::time::Duration;

use super::{CliError, ServeCommand};
use crate::mcp::http::{CallRate, CallerLimits, HttpLimits};
use crate::runtime::Runtime;

/// The limits of `serve --http` (flattened into `serve`'s arguments); defaults are
/// [`HttpLimits::default`]'s.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "HTTP limits")]
pub(super) struct LimitArgs {
    /// Seconds a request head may take to arrive.
    ///
    /// On a kept-alive connection, counted from the previous response; the connection is closed
    /// past it.
    #[arg(long, value_name = "SECONDS", default_value_t = 15.0, value_parser = seconds)]
    header_read_timeout: f64,
    /// Seconds a request body may take to arrive in full (408 past it).
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0, value_parser = seconds)]
    body_read_timeout: f64,
    /// Seconds an idle connection stays open.
    ///
    /// With no request in flight and nothing arriving; between requests the header read timeout
    /// runs too, and the shorter applies.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0, value_parser = seconds)]
    idle_timeout: f64,
    /// Connections served at once (one past it is answered 503 with Retry-After).
    #[arg(long, value_name = "N", default_value_t = 512, value_parser = clap::value_parser!(u32).range(1..))]
    max_connections: u32,
    /// Live sessions at once (503 past it).
    ///
    /// An `initialize` past it is answered 503; a session's slot frees when it is deleted or
    /// expires.
    #[arg(long, value_name = "N", default_value_t = 1024, value_parser = clap::value_parser!(u32).range(1..))]
    max_sessions: u32,
    /// Seconds a session lives without a request before it expires.
    #[arg(long, value_name = "SECONDS", default_value_t = 300.0, value_parser = seconds)]
    session_idle_timeout: f64,
    /// Calls one caller may have running at once (429 past it).
    ///
    /// One `tools/call` more is answered 429 with Retry-After (inside a session: a JSON-RPC error
    /// with the retry time). A caller is its OAuth subject, or the static token's holders together,
    /// or without authorization its IP address (an IPv6 address by its /64). Off by default: what
    /// is fair depends on the tools' cost.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    caller_concurrency: Option<u32>,
    /// Calls one caller may start per second (429 past it).
    ///
    /// Fractions allowed; a `tools/call` past it is answered 429 with Retry-After; listing and the
    /// rest are not counted. Off by default.
    #[arg(long, value_name = "PER_SECOND", value_parser = per_second)]
    caller_rate: Option<f64>,
    /// Calls a caller may start at once after a quiet spell.
    ///
    /// Within --caller-rate. Default: one second's worth of the rate, at least 1.
    #[arg(long, value_name = "N", requires = "caller_rate", value_parser = clap::value_parser!(u32).range(1..))]
    caller_burst: Option<u32>,
}

/// `serve --http` as an OAuth 2.1 resource server (flattened into `serve`'s arguments).
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "Authorization")]
pub(super) struct AuthArgs {
    /// Accept JWT access tokens of this OAuth authorization server (issuer URL).
    ///
    /// Its keys are found through its RFC 8414 or OpenID metadata. Requires --auth-resource.
    #[arg(long, value_name = "URL", requires = "auth_resource", conflicts_with_all = ["auth_token_env", "stdio"])]
    auth_issuer: Option<String>,
    /// This server's canonical URI, which tokens must name in `aud`.
    ///
    /// As clients reach it, e.g. `https://mcp.example.com/mcp`; the Protected Resource Metadata
    /// names it too.
    #[arg(long, value_name = "URI", requires = "auth_issuer")]
    auth_resource: Option<String>,
    /// Also accept tokens with this audience (repeatable).
    ///
    /// For an authorization server that cannot use the resource URI as the audience.
    #[arg(long, value_name = "AUD", requires = "auth_issuer")]
    auth_audience: Vec<String>,
    /// A scope every request's token must grant (repeatable).
    #[arg(long, value_name = "SCOPE", requires = "auth_issuer")]
    required_scope: Vec<String>,
    /// A token claim passed to tools as their caller's (repeatable).
    ///
    /// Tools read it with `cx.caller()`, e.g. `email`.
    #[arg(long, value_name = "CLAIM", requires = "auth_issuer")]
    auth_claim: Vec<String>,
    /// The JWKS URI, when the authorization server publishes no metadata.
    #[arg(long, value_name = "URL", requires = "auth_issuer")]
    auth_jwks_uri: Option<String>,
    /// Shortest time between two fetches of the authorization server's keys.
    ///
    /// A token naming an unknown key refetches them at most this often.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0, value_parser = seconds, requires = "auth_issuer")]
    auth_key_refresh_interval: f64,
    /// `tools/list` shows a caller only the tools its token's scopes allow it to call.
    #[arg(long, requires = "auth_issuer")]
    hide_unauthorized_tools: bool,
    /// Scopes calling tool ID needs (repeatable), e.g. `GMAIL_SEND_EMAIL=mail.send`.
    ///
    /// For tools whose source sets none (imported and provider tools), on top of the tool's own.
    #[arg(long, value_name = "ID=SCOPE[,SCOPE…]", requires = "auth_issuer")]
    tool_scope: Vec<String>,
    /// Accept opaque access tokens through this RFC 7662 introspection endpoint.
    ///
    /// As the client whose id and secret are in TOOLSMITH_OAUTH_CLIENT_ID and
    /// TOOLSMITH_OAUTH_CLIENT_SECRET; valid answers are reused for up to a minute.
    #[arg(long, value_name = "URL", requires = "auth_issuer")]
    oauth_introspection: Option<String>,
}

impl AuthArgs {
    /// The resource server the flags describe, if any.
    fn resource_server(&self) -> Result<Option<std::sync::Arc<crate::mcp::oauth::ResourceServer>>, CliError> {
        let (Some(issuer), Some(resource)) = (&self.auth_issuer, &self.auth_resource) else {
            return Ok(None);
        };
        let mut config = crate::mcp::oauth::OAuthConfig::new(issuer, resource);
        config.audiences = self.auth_audience.clone();
        config.required_scopes = self.required_scope.clone();
        config.claims = self.auth_claim.clone();
        config.jwks_uri = self.auth_jwks_uri.clone();
        config.key_refresh_interval = Duration::from_secs_f64(self.auth_key_refresh_interval);
        if let Some(endpoint) = &self.oauth_introspection {
            let var = |name: &str| match std::env::var(name) {
                Ok(v) if !v.trim().is_empty() => Ok(v.trim().to_owned()),
                _ => Err(CliError::Usage(format!(
                    "--oauth-introspection needs the client credentials in {name} (not set, or empty)"
                ))),
            };
            let (id, secret) = (var("TOOLSMITH_OAUTH_CLIENT_ID")?, var("TOOLSMITH_OAUTH_CLIENT_SECRET")?);
            config.introspection = Some(crate::mcp::oauth::Introspection::new(endpoint, id, secret));
        }
        let server = crate::mcp::oauth::ResourceServer::new(config)?;
        Ok(Some(std::sync::Arc::new(server)))
    }
}

/// `--tool-scope ID=S1,S2`: tool ID's scopes gain S1 and S2 (the tool is replaced by itself
/// under the edited spec).
fn add_tool_scopes(registry: &crate::Registry, flags: &[String]) -> Result<(), CliError> {
    for flag in flags {
        let bad = |why: &str| CliError::Usage(format!("--tool-scope {flag}: {why}"));
        let (id, list) = flag.split_once('=').ok_or_else(|| bad("expected ID=SCOPE[,SCOPE…]"))?;
        let scopes: Vec<&str> = list.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
        if scopes.is_empty() || !scopes.iter().all(|s| crate::spec::is_scope_token(s)) {
            return Err(bad("scopes are printable ASCII without spaces, `\"` or `\\`, separated by commas"));
        }
        let tool = registry
            .get(id)
            .ok_or_else(|| CliError::NotFound(format!("--tool-scope {flag}: there is no tool `{id}`")))?;
        let tool = crate::tool::with_spec(tool, |spec| {
            for scope in scopes {
                if !spec.policy.scopes.iter().any(|s| s == scope) {
                    spec.policy.scopes.push(scope.to_owned());
                }
            }
        });
        registry.remove(id);
        registry.insert(tool).map_err(|e| bad(&e.to_string()))?;
    }
    Ok(())
}

/// A rate: a positive, finite number per second, at most a million.
fn per_second(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 && r <= 1_000_000.0 => Ok(r),
        Ok(_) => Err("must be more than 0 and at most 1000000 per second".into()),
        Err(e) => Err(format!("not a number: {e}")),
    }
}

/// A positive, finite number of seconds (fractions allowed).
pub(super) fn seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 && s <= 31_536_000.0 => Ok(s),
        Ok(_) => Err("must be more than 0 and at most a year (31536000) seconds".into()),
        Err(e) => Err(format!("not a number of seconds: {e}")),
    }
}

impl LimitArgs {
    fn limits(&self) -> HttpLimits {
        HttpLimits {
            header_read_timeout: Duration::from_secs_f64(self.header_read_timeout),
            body_read_timeout: Duration::from_secs_f64(self.body_read_timeout),
            idle_timeout: Duration::from_secs_f64(self.idle_timeout),
            max_connections: self.max_connections as usize,
            max_sessions: self.max_sessions as usize,
            session_idle_timeout: Duration::from_secs_f64(self.session_idle_timeout),
            per_caller: self.per_caller(),
        }
    }

    /// `--caller-concurrency`, `--caller-rate` and `--caller-burst` (one second's worth of the
    /// rate by default).
    fn per_caller(&self) -> CallerLimits {
        let rate = self.caller_rate.and_then(|rate| {
            let one_second = rate.ceil().clamp(1.0, f64::from(u32::MAX)) as u32;
            let burst = NonZeroU32::new(self.caller_burst.unwrap_or(one_second)).unwrap_or(NonZeroU32::MIN);
            CallRate::per_second(rate, burst)
        });
        CallerLimits {
            concurrent_calls: self.caller_concurrency.and_then(NonZeroU32::new),
            rate,
        }
    }
}

/// `serve`: the tools over MCP.
pub(super) async fn serve(runtime: &Runtime, serve: ServeCommand) -> Result<ExitCode, CliError> {
    let ServeCommand {
        stdio,
        http,
        auth_token_env,
        allow_origins,
        allow_hosts,
        max_concurrent_calls,
        page_size,
        max_body_bytes,
        context,
        input_timeout,
        stateless,
        json_response,
        tool_search,
        defer_all_except,
        max_model_output,
        retention,
        limits,
        auth,
        execution,
        deploy,
        tasks: _,
    } = serve;
    // Instances sharing a store hear each other (parked answers, tool changes) before serving.
    if let Some(bus) = runtime.bus() {
        bus.listening().await.map_err(|source| CliError::StoreAt {
            flag: crate::runtime::store_name().unwrap_or("--store").to_owned(),
            source,
        })?;
    }
    let _expiry = retention.map(|r| runtime.keep_expiring(r));
    // Claims of this process's that nothing here works on any more read interrupted, rather
    // than refused as in progress for as long as the server lives.
    let _reconciling = runtime.keep_reconciling(std::time::Duration::from_secs(60));
    runtime.registry().set_execution(execution.policy());
    if max_model_output.is_some() {
        runtime.registry().set_model_output_budget(max_model_output);
    }
    add_tool_scopes(runtime.registry(), &auth.tool_scope)?;
    // What MCP's clients would lose of a tool's declaration, said once (see `catalog::mcp_loss`).
    for tool in runtime.registry().tools() {
        if let Some(loss) = crate::catalog::mcp_loss(tool.spec()) {
            tracing::warn!("{loss}");
        }
    }
    let context = context
        .map(|c| crate::json::parse_unique(c.as_bytes()).map_err(|source| CliError::Json { what: "--context", source }))
        .transpose()?;
    let config = crate::mcp::McpConfig {
        page_size,
        max_concurrent_calls,
        context,
        input_timeout: std::time::Duration::from_secs(input_timeout),
        hide_unauthorized_tools: auth.hide_unauthorized_tools,
        tool_search,
        deferral: defer_all_except.map_or_else(crate::catalog::Deferral::default, |core| {
            crate::catalog::Deferral::all_except(core.into_iter().filter(|id| !id.is_empty()))
        }),
        list_caching: crate::mcp::ListCaching {
            ttl: deploy.list_ttl(),
            tools_can_change: tools_can_change(runtime.registry()),
        },
        ..crate::mcp::McpConfig::default()
    };
    let server = crate::mcp::McpServer::new(runtime.clone(), config);
    compile_in_background(runtime.clone());
    if stdio {
        crate::mcp::stdio::serve(server).await.map_err(|source| CliError::Serve {
            what: "the stdio server stopped".to_owned(),
            source,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    let auth_token = match auth_token_env {
        None => None,
        Some(var) => match std::env::var(&var) {
            Ok(t) if !t.trim().is_empty() => Some(t.trim().to_owned()),
            _ => {
                return Err(CliError::Usage(format!(
                    "--auth-token-env {var}: the variable is not set (or empty)"
                )));
            }
        },
    };
    let mut options = crate::mcp::http::HttpOptions {
        allowed_hosts: allow_hosts,
        allowed_origins: allow_origins,
        auth_token,
        oauth: auth.resource_server()?,
        max_body_bytes,
        stateless,
        json_response,
        limits: limits.limits(),
        ..crate::mcp::http::HttpOptions::default()
    };
    deploy.apply(&mut options);
    let scheme = if deploy.https() { "https" } else { "http" };
    let addr = http.unwrap_or_else(|| std::net::SocketAddr::from(([127, 0, 0, 1], 8931)));
    let shutdown = tokio_util::sync::CancellationToken::new();
    let stop = shutdown.clone();
    tokio::spawn(async move {
        let signal = stop_signal().await;
        tracing::info!(signal, "shutting down");
        stop.cancel();
    });
    crate::mcp::http::serve(server, addr, options, shutdown, |bound| {
        eprintln!("serving MCP on {scheme}://{bound}/mcp")
    })
    .await
    .map_err(|source| CliError::Serve {
        what: format!("cannot serve on {addr}"),
        source,
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Compiles every tool's schemas on a blocking thread while the server starts and serves: a
/// tool's first call then finds its schemas ready (a call that comes first compiles its own
/// tool, once), and a schema that does not compile is logged now rather than at that tool's
/// first call, which it refuses either way.
fn compile_in_background(runtime: Runtime) {
    tokio::task::spawn_blocking(move || {
        if let Err(problems) = runtime.registry().compile_schemas() {
            tracing::error!(
                "{problems}\nEvery call of these tools is refused until their definitions are fixed (`toolsmith check` lists them)."
            );
        }
    });
}

/// Whether the served tool set can change while serving: the registry holds tools that are
/// not linked into the binary (imported, provider or dynamic tools), which come and go.
fn tools_can_change(registry: &crate::Registry) -> bool {
    let linked = crate::Registry::global();
    registry.ids().iter().any(|id| linked.get(id).is_none())
}

/// Resolves at the first SIGTERM or Ctrl-C (SIGINT), naming it.
async fn stop_signal() -> &'static str {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            return tokio::select! {
                _ = term.recv() => "SIGTERM",
                _ = tokio::signal::ctrl_c() => "SIGINT",
            };
        }
    }
    let _ = tokio::signal::ctrl_c().await;
    "SIGINT"
}
