//! The Arcade provider through real HTTP against the local fake: every method (legacy and
//! VNext), every name form, every failure path, the auth-status long poll, connections,
//! tenant isolation, the fan-out end to end and secret redaction.
//!
//! This file holds the fake's setup and the option builders the tests share; the tests are in
//! `tools`, `failures`, `vnext`, `authorization`, `connections` and `fan_out`.

use crate::support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use std::collections::BTreeMap;
use support::arcade_fake::ArcadeFake;

use tool_core::provider::{
    AuthStatus, AuthorizeOptions, ConnectionKind, ConnectionRef, ConnectionStatus, FanOutOptions, ListConnectionsOptions, ListToolsOptions,
    PinnedConnection, ProviderError, ProviderRegistry, ProviderSelection, ResolveOptions, ResolveToolsOptions, Scope, ToolMeta,
    ToolProvider,
};
use tool_core::{CallOptions, ErrorKind, Registry};
use tool_providers::ArcadeToolProvider;
use tool_providers::arcade::ALREADY_AUTHORIZED_ID;

mod authorization;
mod connections;
mod failures;
mod fan_out;
mod tools;
mod vnext;

const KEY: &str = "arc_CANARY_5f1e2d3c4b5a69788796a5b4c3d2e1f0";

async fn setup() -> (ArcadeFake, ArcadeToolProvider) {
    let fake = ArcadeFake::start(KEY).await;
    let arcade = ArcadeToolProvider::new(KEY)
        .base_url(&fake.url)
        .timeout(Duration::from_secs(5))
        .retries(2, Duration::from_secs(2));
    (fake, arcade)
}

fn opts(toolkit: Option<&str>, search: Option<&str>, page: u32, per_page: u32) -> ListToolsOptions {
    ListToolsOptions {
        toolkit: toolkit.map(str::to_owned),
        search: search.map(str::to_owned),
        page: Some(page),
        per_page: Some(per_page),
    }
}

fn ctx(resource: &str) -> CallOptions {
    CallOptions::with_context(json!({"mastra__resourceId": resource}))
}

async fn registry_with(arcade: &ArcadeToolProvider, slugs: &[&str]) -> Registry {
    let tools = arcade
        .resolve_tools(slugs.iter().map(|s| s.to_string()).collect(), ResolveOptions::default())
        .await
        .unwrap();
    let registry = Registry::new();
    for (_, tool) in tools {
        registry.insert(tool).unwrap();
    }
    registry
}

fn authorize_opts(toolkit: &str, user: &str, tool: Option<&str>) -> AuthorizeOptions {
    AuthorizeOptions {
        toolkit: toolkit.into(),
        connection_id: user.into(),
        tool_name: tool.map(str::to_owned),
        ..Default::default()
    }
}

fn connections_of(toolkit: &str, users: Option<&[&str]>) -> ListConnectionsOptions {
    ListConnectionsOptions {
        toolkit: toolkit.into(),
        user_ids: users.map(|u| u.iter().map(|s| s.to_string()).collect()),
        ..Default::default()
    }
}

fn context_of(resource: &str) -> serde_json::Map<String, Value> {
    json!({"mastra__resourceId": resource}).as_object().unwrap().clone()
}
