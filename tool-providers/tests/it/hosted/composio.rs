//! The Composio provider through real HTTP against the local fake: every method, cursor
//! pagination, both API prefixes, every failure path, the connection-management tools, the
//! fan-out, tenant isolation and secret redaction.
//!
//! This file holds the fake's setup and the option builders the tests share; the tests are in
//! `tools`, `connections`, `fan_out` and `failures`.

use crate::support;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use support::composio_fake::{ComposioFake, Misbehave};
use tool_core::provider::{
    AuthStatus, AuthorizeOptions, ConnectionRef, ConnectionStatus, FanOutOptions, FieldType, ListConnectionsOptions, ListToolsOptions,
    PinnedConnection, ProviderError, ProviderRegistry, ProviderSelection, ResolveOptions, ResolveToolsOptions, Scope, ToolMeta,
    ToolProvider,
};
use tool_core::{CallOptions, CancellationToken, ErrorKind, Registry};
use tool_providers::ComposioToolProvider;
use tool_providers::composio::{ApiVersion, MANAGE_CONNECTIONS, WAIT_FOR_CONNECTIONS};

mod connections;
mod failures;
mod fan_out;
mod tools;

const KEY: &str = "ak_CANARY_9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d";

async fn setup() -> (ComposioFake, ComposioToolProvider) {
    let fake = ComposioFake::start(KEY).await;
    let composio = ComposioToolProvider::new(KEY)
        .base_url(&fake.url)
        .timeout(Duration::from_secs(5))
        .retries(2, Duration::from_secs(2))
        .poll_interval(Duration::from_millis(20));
    (fake, composio)
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

fn slugs<T>(items: &[T], f: impl Fn(&T) -> &str) -> Vec<String> {
    items.iter().map(|t| f(t).to_owned()).collect()
}

async fn registry_with(composio: &ComposioToolProvider, slugs: &[&str], options: ResolveOptions) -> Registry {
    let tools = composio
        .resolve_tools(slugs.iter().map(|s| s.to_string()).collect(), options)
        .await
        .unwrap();
    let registry = Registry::new();
    for (_, tool) in tools {
        registry.insert(tool).unwrap();
    }
    registry
}

fn as_user(user: &str) -> ResolveOptions {
    ResolveOptions {
        user_id: Some(user.into()),
        request_context: Map::new(),
    }
}
