//! `--provider composio|arcade`: remote catalogs on the command line. The selected remote tools
//! (`--provider-tools NAME=SLUG,…`) join the linked ones for every command, so `list`,
//! `schema`, `catalog`, `call` and `serve` (an MCP gateway in front of Composio and Arcade) see
//! them as ordinary tools.
//!
//! Owns the provider flags and building the providers from them. API keys come from the
//! environment only (`COMPOSIO_API_KEY`, `ARCADE_API_KEY`), never the command line, where other
//! users of the machine could read them.

use std::collections::BTreeMap;
use std::sync::Arc;

use clap::Args;
use tool_core::Registry;
use tool_core::pins::{self, PinStore};
use tool_core::provider::{ResolveOptions, Scope, ToolProvider};

use super::ImportingCliError;
use crate::{ArcadeToolProvider, ComposioToolProvider};

/// The remote-catalog flags (global: they go before or after the command).
#[derive(Debug, Default, Args)]
#[command(next_help_heading = "Providers")]
pub struct ProviderArgs {
    /// Use a remote catalog: `composio` or `arcade` (repeatable).
    ///
    /// The API keys come from the environment only: COMPOSIO_API_KEY, ARCADE_API_KEY.
    #[arg(id = "provider", long = "provider", value_name = "NAME", global = true, value_parser = ["composio", "arcade"])]
    pub provider: Vec<String>,
    /// The API base URL of provider NAME (a self-hosted or test server).
    #[arg(id = "provider_base_url", long = "provider-base-url", value_name = "NAME=URL", global = true)]
    pub base_url: Vec<String>,
    /// The user id provider NAME's calls run as by default.
    ///
    /// When the request context names no resource id: the author's connections.
    #[arg(id = "provider_user", long = "provider-user", value_name = "NAME=USER", global = true)]
    pub user: Vec<String>,
    /// Whose connections Composio's calls use: `per-author` or `caller-supplied`.
    ///
    /// `per-author` (the default: --provider-user's) or `caller-supplied` (the caller's resource
    /// id; a call without one is refused).
    #[arg(id = "provider_scope", long = "provider-scope", value_name = "NAME=SCOPE", global = true)]
    pub scope: Vec<String>,
    /// Let provider NAME's calls without a user id run as the shared `default` user.
    ///
    /// Off unless asked: a shared id is for integrations meant to be shared.
    #[arg(id = "provider_shared_user", long = "provider-shared-user", value_name = "NAME", global = true)]
    pub shared_user: Vec<String>,
    /// Allow only these toolkits of provider NAME (exact, or ending in `*`).
    #[arg(id = "allow_toolkits", long = "allow-toolkits", value_name = "NAME=TOOLKIT,…", global = true)]
    pub allow_toolkits: Vec<String>,
    /// Allow only these tools of one toolkit of provider NAME (exact, or ending in `*`).
    #[arg(id = "allow_tools", long = "allow-tools", value_name = "NAME:TOOLKIT=SLUG,…", global = true)]
    pub allow_tools: Vec<String>,
    /// The remote tools of provider NAME to use, by slug.
    ///
    /// `GITHUB_CREATE_ISSUE`, `Github.GetRepository`: they join the linked tools for every command.
    #[arg(id = "provider_tools", long = "provider-tools", value_name = "NAME=SLUG,…", global = true)]
    pub tools: Vec<String>,
}

/// One provider built from the flags, with the slugs to resolve.
pub struct Selected {
    /// `composio` or `arcade`.
    pub name: String,
    /// The provider.
    pub provider: Arc<dyn ToolProvider>,
    /// `--provider-tools` for it.
    pub slugs: Vec<String>,
    /// `--provider-user` for it (the connection its tools are pinned for).
    pub user: Option<String>,
}

/// NAME (lower-cased), which the flag `flag VALUE` names: one of the `--provider`s.
fn known(flag: &str, value: &str, name: &str, providers: &[String]) -> Result<String, ImportingCliError> {
    let name = name.trim().to_ascii_lowercase();
    if !providers.contains(&name) {
        return Err(usage(format!("`{flag} {value}`: no `--provider {name}`")));
    }
    Ok(name)
}

/// `NAME=VALUE` of a flag whose NAME must be one of the `--provider`s.
fn named<'a>(flag: &str, value: &'a str, providers: &[String]) -> Result<(String, &'a str), ImportingCliError> {
    let (name, rest) = value
        .split_once('=')
        .ok_or_else(|| usage(format!("`{flag} {value}`: expected NAME=VALUE")))?;
    Ok((known(flag, value, name, providers)?, rest.trim()))
}

fn usage(message: String) -> ImportingCliError {
    ImportingCliError::Usage(message)
}

fn list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// The settings of one provider, gathered from the flags.
#[derive(Default)]
struct Settings {
    base_url: Option<String>,
    user: Option<String>,
    scope: Option<Scope>,
    shared_user: bool,
    toolkits: Vec<String>,
    tools: Vec<(String, Vec<String>)>,
    slugs: Vec<String>,
}

impl ProviderArgs {
    /// Whether any provider was asked for.
    pub fn is_empty(&self) -> bool {
        self.provider.is_empty()
    }

    /// The providers the flags describe; `env` reads an environment variable (the API keys).
    pub fn build(&self, env: &dyn Fn(&str) -> Option<String>) -> Result<Vec<Selected>, ImportingCliError> {
        let mut providers: Vec<String> = Vec::new();
        for p in &self.provider {
            if providers.contains(p) {
                return Err(usage(format!("`--provider {p}` is given twice")));
            }
            providers.push(p.clone());
        }
        let mut settings: BTreeMap<String, Settings> = providers.iter().map(|p| (p.clone(), Settings::default())).collect();
        self.gather(&providers, &mut settings)?;
        let mut selected = Vec::new();
        for (name, s) in settings {
            let variable = format!("{}_API_KEY", name.to_ascii_uppercase());
            let key = env(&variable).filter(|k| !k.trim().is_empty()).ok_or_else(|| {
                usage(format!(
                    "`--provider {name}`: set its API key in the environment variable {variable}"
                ))
            })?;
            let (slugs, user) = (s.slugs.clone(), s.user.clone());
            let provider = build_one(&name, key, s)?;
            selected.push(Selected {
                name,
                provider,
                slugs,
                user,
            });
        }
        Ok(selected)
    }

    fn gather(&self, providers: &[String], settings: &mut BTreeMap<String, Settings>) -> Result<(), ImportingCliError> {
        for v in &self.base_url {
            let (name, url) = named("--provider-base-url", v, providers)?;
            settings.entry(name).or_default().base_url = Some(url.to_owned());
        }
        for v in &self.user {
            let (name, user) = named("--provider-user", v, providers)?;
            settings.entry(name).or_default().user = Some(user.to_owned());
        }
        for v in &self.scope {
            let (name, scope) = named("--provider-scope", v, providers)?;
            let scope = match scope {
                "per-author" => Scope::PerAuthor,
                "caller-supplied" => Scope::CallerSupplied,
                other => {
                    return Err(usage(format!(
                        "`--provider-scope {v}`: `{other}` is not per-author or caller-supplied"
                    )));
                }
            };
            if name != "composio" {
                return Err(usage(format!(
                    "`--provider-scope {v}`: {name} has no scope setting (it uses the caller's resource id, else --provider-user)"
                )));
            }
            settings.entry(name).or_default().scope = Some(scope);
        }
        for v in &self.shared_user {
            let name = known("--provider-shared-user", v, v, providers)?;
            settings.entry(name).or_default().shared_user = true;
        }
        for v in &self.allow_toolkits {
            let (name, toolkits) = named("--allow-toolkits", v, providers)?;
            settings.entry(name).or_default().toolkits.extend(list(toolkits));
        }
        for v in &self.allow_tools {
            let (head, slugs) = v
                .split_once('=')
                .ok_or_else(|| usage(format!("`--allow-tools {v}`: expected NAME:TOOLKIT=SLUG,…")))?;
            let (name, toolkit) = head
                .split_once(':')
                .ok_or_else(|| usage(format!("`--allow-tools {v}`: expected NAME:TOOLKIT=SLUG,…")))?;
            let name = known("--allow-tools", v, name, providers)?;
            settings
                .entry(name)
                .or_default()
                .tools
                .push((toolkit.trim().to_owned(), list(slugs)));
        }
        for v in &self.tools {
            let (name, slugs) = named("--provider-tools", v, providers)?;
            settings.entry(name).or_default().slugs.extend(list(slugs));
        }
        Ok(())
    }
}

/// One provider from its settings.
fn build_one(name: &str, key: String, s: Settings) -> Result<Arc<dyn ToolProvider>, ImportingCliError> {
    macro_rules! configure {
        ($p:expr) => {{
            let mut p = $p;
            if let Some(url) = s.base_url {
                p = p.base_url(url);
            }
            if let Some(user) = s.user {
                p = p.user_id(user);
            }
            if !s.toolkits.is_empty() {
                p = p.allowed_toolkits(s.toolkits);
            }
            for (toolkit, tools) in s.tools {
                p = p.allowed_tools(toolkit, tools);
            }
            p.allow_shared_user(s.shared_user)
        }};
    }
    Ok(match name {
        "composio" => {
            let mut p = configure!(ComposioToolProvider::new(key));
            if let Some(scope) = s.scope {
                p = p.default_scope(scope);
            }
            Arc::new(p)
        }
        "arcade" => Arc::new(configure!(ArcadeToolProvider::new(key))),
        other => {
            return Err(ImportingCliError::NotFound(format!("no provider `{other}` (composio or arcade)")));
        }
    })
}

/// Resolves each provider's `--provider-tools` into `registry`, pinned in `pins` (per provider
/// and `--provider-user`); an id that is taken already is refused.
pub async fn resolve_into(selected: &[Selected], registry: &Registry, pins: &Arc<dyn PinStore>) -> Result<(), ImportingCliError> {
    for s in selected.iter().filter(|s| !s.slugs.is_empty()) {
        let at = format!("`--provider-tools {}=…`", s.name);
        let tools = s
            .provider
            .resolve_tools(s.slugs.clone(), ResolveOptions::default())
            .await
            .map_err(|source| ImportingCliError::ProviderAt { at: at.clone(), source })?;
        for slug in &s.slugs {
            if !tools.contains_key(slug) {
                return Err(ImportingCliError::NotFound(format!(
                    "{at}: {} has no tool `{slug}` (or it is not allowed)",
                    s.name
                )));
            }
        }
        let tools: Vec<_> = tools.into_values().collect();
        let connection = s.user.as_deref().unwrap_or("default");
        pins::pin_all(&**pins, &s.name, connection, &tools)
            .await
            .map_err(|source| ImportingCliError::PinsAt { at: at.clone(), source })?;
        for tool in tools {
            let id = tool.spec().id.clone();
            registry
                .insert(pins::pinned(tool, &s.name, connection, pins.clone()))
                .map_err(|source| ImportingCliError::Registry {
                    at: format!("{at}: `{id}`: "),
                    source,
                })?;
        }
    }
    Ok(())
}
