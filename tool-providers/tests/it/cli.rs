//! `--provider composio|arcade` on the command line, against the local fakes of their public
//! APIs over real HTTP: the selected remote tools are ordinary tools for `list`, `call` and
//! `catalog`; keys come from the environment only; allow-lists, users and scopes apply; every
//! mistake in the flags is a clear error before anything runs.

use crate::support;

use std::collections::BTreeMap;
use std::process::ExitCode;

use clap::Parser;
use serde_json::{Value, json};
use support::arcade_fake::ArcadeFake;
use support::composio_fake::ComposioFake;
use tool_providers::cli::{ImportingCli, execute_importing_with_env};

const COMPOSIO_KEY: &str = "ak_CANARY_cli_0123456789abcdef";
const ARCADE_KEY: &str = "arc_CANARY_cli_0123456789abcdef";

/// Runs `toolsmith ARGS` in-process with the given environment; (exit code or error, stdout).
async fn toolsmith(args: &[&str], env: &[(&str, &str)]) -> (Result<ExitCode, String>, String) {
    let env: BTreeMap<String, String> = env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let parsed = ImportingCli::try_parse_from(std::iter::once("toolsmith").chain(args.iter().copied())).unwrap();
    let mut out = Vec::new();
    let result = execute_importing_with_env(parsed, &|name| env.get(name).cloned(), &mut out).await;
    (result.map_err(|e| e.to_string()), String::from_utf8(out).unwrap())
}

fn keys() -> Vec<(&'static str, &'static str)> {
    vec![("COMPOSIO_API_KEY", COMPOSIO_KEY), ("ARCADE_API_KEY", ARCADE_KEY)]
}

fn ids(listing: &str) -> Vec<String> {
    let list: Value = serde_json::from_str(listing).unwrap();
    list.as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn composio_tools_are_listed_exported_and_called_like_linked_ones() {
    let fake = ComposioFake::start(COMPOSIO_KEY).await;
    fake.add_account("ann", "github", "ACTIVE");
    let base = format!("composio={}", fake.url);
    let flags = [
        "--provider",
        "composio",
        "--provider-base-url",
        &base,
        "--provider-user",
        "composio=ann",
        "--provider-tools",
        "composio=GITHUB_CREATE_ISSUE,GITHUB_GET_REPO",
    ];
    let (code, listing) = toolsmith(&[&flags[..], &["list", "--json"]].concat(), &keys()).await;
    assert_eq!(code, Ok(ExitCode::SUCCESS));
    let listed = ids(&listing);
    assert!(
        listed.contains(&"GITHUB_CREATE_ISSUE".to_owned()) && listed.contains(&"GITHUB_GET_REPO".to_owned()),
        "{listed:?}"
    );

    let (code, catalog) = toolsmith(&[&flags[..], &["catalog", "--format", "openai"]].concat(), &keys()).await;
    assert_eq!(code, Ok(ExitCode::SUCCESS));
    assert!(catalog.contains("\"name\":\"GITHUB_CREATE_ISSUE\""), "{catalog}");

    let args = r#"{"owner": "acme", "repo": "tools", "title": "Flaky test"}"#;
    let (code, result) = toolsmith(&[&flags[..], &["call", "GITHUB_CREATE_ISSUE", args]].concat(), &keys()).await;
    assert_eq!(code, Ok(ExitCode::SUCCESS), "{result}");
    let executed = fake.seen(|s| format!("{:?}", s.executions));
    assert!(
        executed.contains("GITHUB_CREATE_ISSUE") && executed.contains("ann"),
        "the fake ran it as ann: {executed}"
    );
    assert!(!result.contains(COMPOSIO_KEY), "{result}");
}

#[tokio::test(flavor = "multi_thread")]
async fn arcade_tools_run_as_the_given_user() {
    let fake = ArcadeFake::start(ARCADE_KEY).await;
    let base = format!("arcade={}", fake.url);
    let args = [
        "--provider",
        "arcade",
        "--provider-base-url",
        &base,
        "--provider-user",
        "arcade=bob",
        "--provider-tools",
        "arcade=Math.Add",
        "call",
        "Math.Add",
        r#"{"a": 2, "b": 3}"#,
    ];
    let (code, result) = toolsmith(&args, &keys()).await;
    assert_eq!(code, Ok(ExitCode::SUCCESS), "{result}");
    assert_eq!(serde_json::from_str::<Value>(&result).unwrap(), json!(5), "{result}");
    let executed = fake.seen(|s| s.executions.clone());
    assert_eq!(executed.len(), 1, "{executed:?}");
    assert!(executed[0].0.starts_with("Math.Add") && executed[0].1 == "bob", "{executed:?}");
}

/// Arguments, environment, and what the error must say.
type Mistake<'a> = (Vec<&'a str>, Vec<(&'a str, &'a str)>, &'a str);

#[tokio::test(flavor = "multi_thread")]
async fn mistakes_in_the_flags_are_clear_errors_before_anything_runs() {
    let fake = ComposioFake::start(COMPOSIO_KEY).await;
    let base = format!("composio={}", fake.url);
    let composio = [
        "--provider",
        "composio",
        "--provider-base-url",
        base.as_str(),
        "--provider-user",
        "composio=ann",
    ];
    let cases: Vec<Mistake> = vec![
        (vec!["--provider", "composio", "list"], vec![], "COMPOSIO_API_KEY"),
        (
            vec!["--provider-tools", "arcade=Math.Add", "list"],
            keys(),
            "no `--provider arcade`",
        ),
        (
            [&composio[..], &["--provider-scope", "composio=everyone", "list"]].concat(),
            keys(),
            "not per-author or caller-supplied",
        ),
        (
            [
                &composio[..],
                &[
                    "--allow-toolkits",
                    "composio=gmail",
                    "--provider-tools",
                    "composio=GITHUB_CREATE_ISSUE",
                    "list",
                ],
            ]
            .concat(),
            keys(),
            "GITHUB_CREATE_ISSUE",
        ),
        (
            [&composio[..], &["--provider-tools", "composio=NO_SUCH_TOOL", "list"]].concat(),
            keys(),
            "NO_SUCH_TOOL",
        ),
        ([&composio[..], &["--provider", "composio", "list"]].concat(), keys(), "given twice"),
        (
            vec![
                "--provider",
                "composio",
                "--provider-base-url",
                base.as_str(),
                "--provider-tools",
                "composio=GITHUB_GET_REPO",
                "list",
            ],
            keys(),
            "per-author scope needs the author's id",
        ),
    ];
    for (args, env, expected) in cases {
        let (result, out) = toolsmith(&args, &env).await;
        let err = result.expect_err(&format!("{args:?} fails"));
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}: nothing ran: {out}");
        assert!(!err.contains(COMPOSIO_KEY), "the key stays out of errors: {err}");
    }
    assert!(fake.seen(|s| s.executions.is_empty()), "no tool ran");
}

#[test]
fn keys_are_never_flags() {
    let err = ImportingCli::try_parse_from(["toolsmith", "--provider", "composio", "--api-key", "x", "list"]).unwrap_err();
    assert!(err.to_string().contains("--api-key"), "{err}");
    let err = ImportingCli::try_parse_from(["toolsmith", "--provider", "zapier", "list"]).unwrap_err();
    assert!(err.to_string().contains("zapier"), "{err}");
}

/// `--provider-base-url` for both fakes.
fn bases(composio: &ComposioFake, arcade: &ArcadeFake) -> Vec<String> {
    vec![
        "--provider-base-url".into(),
        format!("composio={}", composio.url),
        "--provider-base-url".into(),
        format!("arcade={}", arcade.url),
    ]
}

async fn providers(base: &[String], args: &[&str]) -> (Result<ExitCode, String>, String) {
    let all: Vec<&str> = base.iter().map(String::as_str).chain(args.iter().copied()).collect();
    toolsmith(&all, &keys()).await
}

#[tokio::test(flavor = "multi_thread")]
async fn providers_lists_health_tools_and_manages_connections() {
    let (composio, arcade) = (ComposioFake::start(COMPOSIO_KEY).await, ArcadeFake::start(ARCADE_KEY).await);
    let base = bases(&composio, &arcade);

    let (code, out) = providers(&base, &["--provider", "composio", "--provider", "arcade", "providers"]).await;
    assert_eq!(code, Ok(ExitCode::SUCCESS), "{out}");
    let health: Vec<Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(health.len(), 2, "{out}");
    assert!(health.iter().all(|h| h["ok"] == true), "{out}");

    // A provider named by the subcommand needs no --provider (its base URL still needs it).
    let only = |name: &str| -> Vec<String> {
        let url = if name == "composio" { &composio.url } else { &arcade.url };
        vec!["--provider-base-url".into(), format!("{name}={url}")]
    };
    let base_c = only("composio");
    let base_a = only("arcade");
    let (code, out) = providers(&base_c, &["providers", "tools", "composio", "--toolkit", "github"]).await;
    assert_eq!(code, Ok(ExitCode::SUCCESS), "{out}");
    assert!(
        out.contains("GITHUB_CREATE_ISSUE") && out.contains("GITHUB_GET_REPO") && !out.contains("GMAIL"),
        "{out}"
    );
    let (code, out) = providers(&base_a, &["providers", "tools", "arcade", "--toolkit", "Math"]).await;
    assert_eq!(code, Ok(ExitCode::SUCCESS), "{out}");
    assert!(out.contains("Math.Add") && !out.contains("Github."), "{out}");

    let (code, out) = providers(&base_c, &["providers", "connect", "composio", "gmail", "--user", "ann"]).await;
    assert_eq!(code, Ok(ExitCode::SUCCESS), "{out}");
    assert!(out.contains("open this link to connect gmail for ann: https://"), "{out}");
    assert!(
        composio.seen(|s| s.links.iter().any(|(_, user)| user == "ann")),
        "the fake linked ann"
    );
    let (code, _) = providers(
        &base_c,
        &["providers", "connect", "composio", "gmail", "--user", "ann", "--wait", "1"],
    )
    .await;
    let err = code.unwrap_err();
    assert!(err.contains("did not complete within 1 s"), "{err}");

    let id = composio.add_account("bob", "github", "ACTIVE");
    let (code, out) = providers(&base_c, &["providers", "connections", "composio", "github", "--user", "bob"]).await;
    assert_eq!(code, Ok(ExitCode::SUCCESS), "{out}");
    assert!(out.contains(&id) && out.contains("active"), "{out}");
    let (code, out) = providers(&base_c, &["providers", "revoke", "composio", &id]).await;
    assert_eq!((code, out.trim()), (Ok(ExitCode::SUCCESS), format!("revoked {id}").as_str()));
    assert!(composio.seen(|s| s.deleted.contains(&id)), "the fake saw the delete");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_provider_that_does_not_answer_fails_the_health_listing() {
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let base = vec!["--provider-base-url".to_owned(), format!("arcade=http://{closed}")];
    let (code, out) = providers(&base, &["--provider", "arcade", "providers"]).await;
    assert_eq!(code, Ok(ExitCode::FAILURE), "{out}");
    let health: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(health["ok"], false, "{out}");
    let (code, _) = providers(&[], &["providers"]).await;
    assert!(code.unwrap_err().contains("no provider is configured"));
}
