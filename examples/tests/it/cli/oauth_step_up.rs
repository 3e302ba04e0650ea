//! Step-up and a machine client's long session, end to end, on `oauth_login`'s authorization
//! server and `toolsmith serve --http` as the protected resource, `convert-units` needing the
//! scope `crm.write` (`--tool-scope`): the resource answers a call without it with a 403
//! `insufficient_scope` naming the scope.
//!
//! A user's login cannot be widened without the user: the call fails naming `mcp login … --scope
//! …` with the union of the scopes held and asked, and `mcp login` again (given only the new
//! scope) asks the authorization server for the union. A machine client (client credentials)
//! steps up by itself, and a token of its own that runs out in the middle of a long session
//! (`serve --stdio` importing the server) is fetched again. A machine client that signs
//! `private_key_jwt` assertions with a key from a PEM file logs in and calls too.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use serde_json::{Value, json};

use super::oauth_login::{Setup, assert_no_secret, convert_call, login_as_browser, run, setup_serving, toolsmith};

const SCOPED: [&str; 2] = ["--tool-scope", "convert-units=crm.write"];

/// `mcp login NAME URL --no-browser ARGS…` into `store`, the test playing the browser; its
/// output.
fn browser_login(setup: &Setup, store: &str, name: &str, args: &[&str]) -> String {
    let mut argv = vec![
        "--store",
        store,
        "mcp",
        "login",
        name,
        &setup.url,
        "--no-browser",
        "--timeout",
        "60",
    ];
    argv.extend_from_slice(args);
    let (logged_in, printed, err) = login_as_browser(&argv, setup.dir.path(), &setup.rt);
    assert!(logged_in && printed.contains("Logged in"), "{printed}\n{err}");
    printed + &err
}

#[test]
fn a_user_steps_up_by_logging_in_again_for_the_union_of_the_scopes() {
    let setup = setup_serving(&SCOPED);
    let store = setup.dir.path().join("client.sqlite3");
    let store = store.to_str().unwrap();
    // (The resource's metadata offers `crm.write`: asked for `mcp` only, the login lacks it.)
    let mut outputs = vec![browser_login(&setup, store, "crm", &["--scope", "mcp"])];
    let first = setup.auth.state.lock().unwrap().asked.clone();
    assert!(first.len() == 1 && !first[0].contains("crm.write"), "{first:?}");

    // The call needs `crm.write`: refused, naming the login that asks for every scope.
    let import = format!("crm={}", setup.url);
    let call = convert_call(store, &import, "crm_convert-units");
    let (ok, stdout, stderr) = run(&call, setup.dir.path());
    let wanted = format!("toolsmith mcp login crm {} --scope mcp ", setup.url);
    assert!(
        !ok && stderr.contains(&wanted) && stderr.contains("--scope crm.write`"),
        "{stdout}\n{stderr}"
    );
    outputs.extend([stdout, stderr]);

    // Logging in again for the new scope asks for the union (the stored login's scopes kept).
    outputs.push(browser_login(&setup, store, "crm", &["--scope", "crm.write"]));
    let asked = setup.auth.state.lock().unwrap().asked.clone();
    assert_eq!(asked.len(), 2, "{asked:?}");
    let second: Vec<&str> = asked[1].split(' ').collect();
    assert!(second.contains(&"mcp") && second.contains(&"crm.write"), "{asked:?}");
    let (ok, stdout, stderr) = run(&call, setup.dir.path());
    assert!(ok && stdout.contains("212"), "{stdout}\n{stderr}");
    outputs.extend([stdout, stderr]);
    assert_no_secret(&setup.auth, &outputs);
}

/// One JSON-RPC message to `serve --stdio`, and (for a request) the answer with its id.
pub(super) struct Stdio_ {
    pub(super) child: std::process::Child,
    pub(super) lines: BufReader<std::process::ChildStdout>,
}

impl Stdio_ {
    /// Starts `command` (a `serve --stdio`) and initializes its session at 2025-11-25.
    pub(super) fn start(command: &mut std::process::Command) -> Self {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = BufReader::new(child.stdout.take().unwrap());
        let mut session = Stdio_ { child, lines };
        let hello = json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}});
        session.request(1, "initialize", hello);
        session.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        session
    }

    pub(super) fn send(&mut self, message: Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    pub(super) fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            assert!(
                self.lines.read_line(&mut line).unwrap() > 0,
                "serve --stdio ended before answering {method}"
            );
            let answer: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
            if answer["id"] == json!(id) {
                return answer;
            }
        }
    }
}

#[test]
fn a_machine_steps_up_by_itself_and_fetches_a_new_token_when_its_own_runs_out() {
    let setup = setup_serving(&SCOPED);
    // Its tokens live two seconds.
    setup.auth.state.lock().unwrap().machine_lifetime = 2;
    let store = setup.dir.path().join("client.sqlite3");
    let store = store.to_str().unwrap();
    let secret = "machine-secret-CANARY";
    setup.auth.state.lock().unwrap().secrets.push(secret.into());
    let login = [
        "--store",
        store,
        "mcp",
        "login",
        "ci",
        &setup.url,
        "--client-credentials",
        "--client-id",
        "machine",
        "--client-secret-env",
        "CI_SECRET",
    ];
    let out = toolsmith(&login, setup.dir.path()).env("CI_SECRET", secret).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(setup.auth.state.lock().unwrap().machine_grants.len(), 1);

    // A long session: `serve --stdio` with the server imported, two calls three seconds apart.
    let import = format!("ci={}", setup.url);
    let mut session = Stdio_::start(
        toolsmith(&["--store", store, "--import-mcp", &import, "serve", "--stdio"], setup.dir.path()).env("RUST_LOG", "debug"),
    );
    let convert = json!({"name": "ci_convert-units", "arguments": {"value": 100, "from": "C", "to": "F"}});
    let first = session.request(2, "tools/call", convert.clone());
    assert!(first.to_string().contains("212"), "{first}");
    // The first call stepped up: a token for the scope it held and `crm.write`.
    let grants = setup.auth.state.lock().unwrap().machine_grants.clone();
    assert_eq!(grants.len(), 2, "{grants:?}");
    assert!(
        grants[1].split(' ').any(|s| s == "crm.write") && grants[1].split(' ').any(|s| s == "mcp"),
        "{grants:?}"
    );

    std::thread::sleep(std::time::Duration::from_secs(3));
    let second = session.request(3, "tools/call", convert);
    assert!(second.to_string().contains("212"), "{second}");
    let grants = setup.auth.state.lock().unwrap().machine_grants.clone();
    assert_eq!(grants.len(), 3, "the expired token was fetched again: {grants:?}");
    assert!(
        grants[2].split(' ').any(|s| s == "crm.write"),
        "the new token keeps the wider scope: {grants:?}"
    );

    drop(session.child.stdin.take());
    let _ = session.child.kill();
    let out = session.child.wait_with_output().unwrap();
    assert_no_secret(&setup.auth, &[String::from_utf8_lossy(&out.stderr).into_owned()]);
}

/// An EC P-256 key made for this test, and its public half (the authorization server's).
pub(super) const SIGNER_KEY: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg8LK86hTIDfic9tDI
ZneQg6BlJ1aEDCAeRnluPpvqKKuhRANCAASPJ3NAaDHsU0usIOMJNbRX/+IYSQtW
3AhlKCqMR4zSKYJ64kcqxFJ9rxnXNRbQu6CSyBzMLeqUfagyW7VHldNY
-----END PRIVATE KEY-----
";
pub(super) const SIGNER_PUBLIC: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEjydzQGgx7FNLrCDjCTW0V//iGEkL
VtwIZSgqjEeM0imCeuJHKsRSfa8Z1zUW0LugksgczC3qlH2oMlu1R5XTWA==
-----END PUBLIC KEY-----
";

#[test]
fn a_machine_signs_private_key_jwt_assertions_with_a_key_from_a_file() {
    let setup = setup_serving(&[]);
    {
        let mut s = setup.auth.state.lock().unwrap();
        s.signer_key = Some(SIGNER_PUBLIC.to_owned());
        // The key's lines: none may be printed.
        s.secrets
            .extend(SIGNER_KEY.lines().filter(|l| !l.starts_with("-----")).map(str::to_owned));
    }
    let store = setup.dir.path().join("client.sqlite3");
    let store = store.to_str().unwrap();
    let key_file = setup.dir.path().join("signer.pem");
    std::fs::write(&key_file, SIGNER_KEY).unwrap();
    let login = [
        "--store",
        store,
        "mcp",
        "login",
        "signed",
        &setup.url,
        "--client-credentials",
        "--client-id",
        "signer",
        "--client-key-file",
        key_file.to_str().unwrap(),
    ];
    let (ok, stdout, stderr) = run(&login, setup.dir.path());
    assert!(ok && stdout.contains("Logged in to `signed`"), "{stdout}\n{stderr}");
    assert_eq!(
        setup.auth.state.lock().unwrap().assertions,
        1,
        "the assertion was checked and accepted"
    );
    let mut outputs = vec![stdout, stderr];

    // Another key is refused by the authorization server.
    let other = setup.dir.path().join("other.pem");
    std::fs::write(&other, "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgAeFmyoREV6Zg166k\nzZ9iEq58pdkMbnDx4KtaVs0j5aahRANCAAR9QCYe03UDuNAA/fO2ICh7wfg/xuof\nWTH0sWx1GKMjQczuQ6H5vJl5S2ov12glSu8AqCaWJEvRtaAK5sacZku4\n-----END PRIVATE KEY-----\n").unwrap();
    let mut refused = login.to_vec();
    let last = refused.len() - 1;
    refused[last] = other.to_str().unwrap();
    let (ok, _, stderr) = run(&refused, setup.dir.path());
    assert!(!ok && stderr.contains("invalid_client"), "{stderr}");
    outputs.push(stderr);

    let import = format!("signed={}", setup.url);
    let call = convert_call(store, &import, "signed_convert-units");
    let (ok, stdout, stderr) = run(&call, setup.dir.path());
    assert!(ok && stdout.contains("212"), "{stdout}\n{stderr}");
    outputs.extend([stdout, stderr]);
    assert_no_secret(&setup.auth, &outputs);
}

/// `toolsmith ARGS` with the test as the browser of the login it runs by itself
/// (`--interactive-login=print`): the URL it prints on standard error opened, then waited for.
/// Whether it succeeded, its stdout, its stderr, and whether a URL was printed.
pub(super) fn run_as_browser(args: &[&str], setup: &Setup) -> (bool, String, String, bool) {
    run_as_browser_in(args, setup.dir.path(), &setup.rt)
}

/// [`run_as_browser`] with the data directory `data`, `rt` running the requests.
pub(super) fn run_as_browser_in(args: &[&str], data: &std::path::Path, rt: &tokio::runtime::Runtime) -> (bool, String, String, bool) {
    let mut child = toolsmith(args, data).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let out = std::thread::spawn(move || std::io::read_to_string(stdout).unwrap_or_default());
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    let mut opened = false;
    loop {
        let mut line = String::new();
        if stderr.read_line(&mut line).unwrap_or(0) == 0 {
            break;
        }
        said.push_str(&line);
        if line.starts_with("http") && said.contains("Open this URL to log in") {
            let landed = rt.block_on(async { reqwest::get(line.trim()).await.unwrap() });
            assert_eq!(landed.status(), 200, "the callback answered");
            opened = true;
            break;
        }
    }
    let rest = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap_or_default());
    let status = child.wait().unwrap();
    said.push_str(&rest.join().unwrap());
    (status.success(), out.join().unwrap(), said, opened)
}

#[test]
fn with_interactive_login_a_user_steps_up_in_the_middle_of_the_call() {
    let setup = setup_serving(&SCOPED);
    let store = setup.dir.path().join("client.sqlite3");
    let store = store.to_str().unwrap();
    let mut outputs = vec![browser_login(&setup, store, "crm", &["--scope", "mcp"])];
    let import = format!("crm={}", setup.url);
    let call = convert_call(store, &import, "crm_convert-units");

    // Without the flag (a program): the error naming the login, nothing waits for a browser.
    let (ok, stdout, stderr) = run(&call, setup.dir.path());
    let wanted = format!("log in again for it with `toolsmith mcp login crm {} --scope mcp ", setup.url);
    assert!(
        !ok && stderr.contains(&wanted) && stderr.contains("--scope crm.write`") && !stderr.contains("Open this URL"),
        "{stdout}\n{stderr}"
    );
    outputs.extend([stdout, stderr]);
    assert_eq!(setup.auth.state.lock().unwrap().asked.len(), 1);

    // With it: the login runs there (the test is the browser) and the call passes.
    let mut interactive = call.to_vec();
    interactive.insert(4, "--interactive-login=print");
    let (ok, stdout, stderr, opened) = run_as_browser(&interactive, &setup);
    assert!(opened && ok && stdout.contains("212"), "{stdout}\n{stderr}");
    let asked = setup.auth.state.lock().unwrap().asked.clone();
    assert_eq!(asked.len(), 2, "{asked:?}");
    let second: Vec<&str> = asked[1].split(' ').collect();
    assert!(second.contains(&"mcp") && second.contains(&"crm.write"), "{asked:?}");
    outputs.extend([stdout, stderr]);

    // The wider login is stored: the next call needs no login.
    let (ok, stdout, stderr) = run(&call, setup.dir.path());
    assert!(ok && stdout.contains("212"), "{stdout}\n{stderr}");
    outputs.extend([stdout, stderr]);
    assert_no_secret(&setup.auth, &outputs);
}

#[test]
fn with_interactive_login_an_import_without_a_login_logs_in_first() {
    let setup = setup_serving(&[]);
    let store = setup.dir.path().join("client.sqlite3");
    let store = store.to_str().unwrap();
    let import = format!("crm={}", setup.url);
    let mut call = convert_call(store, &import, "crm_convert-units").to_vec();
    call.insert(4, "--interactive-login=print");
    let (ok, stdout, stderr, opened) = run_as_browser(&call, &setup);
    assert!(opened && ok && stdout.contains("212"), "{stdout}\n{stderr}");
    assert_eq!(setup.auth.state.lock().unwrap().clients.len(), 1, "registered once");
    // The login is stored: the next import needs none.
    let (ok, stdout, stderr) = run(&convert_call(store, &import, "crm_convert-units"), setup.dir.path());
    assert!(ok && stdout.contains("212"), "{stdout}\n{stderr}");
    assert_no_secret(&setup.auth, &[stdout, stderr]);
}
