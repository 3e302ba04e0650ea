//! SEP-2352 (MCP 2026-07-28, "Authorization Server Binding"), end to end: our own resource
//! server (`toolsmith serve --http`) is restarted on the same port naming another authorization
//! server (both are `oauth_login`'s, each with its own clients), as an operator moving it would.
//! Nothing of a login made with the first one (client id, secret, assertion, token) may reach
//! the second:
//!
//! - a user's login: the running import's next call, and a new import, fail naming `mcp login`,
//!   which registers with the new server (a new client) and then the import works;
//! - a machine client with a portable id (a client ID metadata document URL, `private_key_jwt`)
//!   moves to the new server by itself in the middle of a session, and a new import uses it;
//! - a machine client with a secret (registered with the first server) fails naming the login
//!   with a client of the new server, its secret never sent there.

use serde_json::{Value, json};

use super::oauth_login::{
    Auth, Served, assert_no_secret, convert_call, free_port, login_as_browser, run, serve_resource, start_auth, toolsmith,
};
use super::oauth_step_up::{SIGNER_KEY, SIGNER_PUBLIC, Stdio_, run_as_browser_in};

/// Two authorization servers and the resource server naming the first.
struct Moving {
    rt: tokio::runtime::Runtime,
    dir: tempfile::TempDir,
    port: u16,
    url: String,
    first: Auth,
    second: Auth,
    served: Option<Served>,
}

impl Moving {
    fn new() -> Self {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let url = format!("http://127.0.0.1:{port}/mcp");
        let first = start_auth(&rt, url.clone());
        let second = start_auth(&rt, url.clone());
        let served = Some(serve_resource(dir.path(), port, &first, &[]));
        Moving {
            rt,
            dir,
            port,
            url,
            first,
            second,
            served,
        }
    }

    /// The resource server restarted naming the second authorization server.
    fn migrate(&mut self) {
        drop(self.served.take());
        self.served = Some(serve_resource(self.dir.path(), self.port, &self.second, &[]));
    }

    fn store(&self) -> String {
        self.dir.path().join("client.sqlite3").to_str().unwrap().to_owned()
    }

    /// `mcp login crm URL --no-browser` into the store, the test being the browser; what it
    /// printed (standard output, standard error).
    fn log_in_user(&self) -> (String, String) {
        let store = self.store();
        let login = [
            "--store",
            &store,
            "mcp",
            "login",
            "crm",
            &self.url,
            "--no-browser",
            "--timeout",
            "60",
        ];
        let (ok, printed, err) = login_as_browser(&login, self.dir.path(), &self.rt);
        assert!(ok, "{printed}\n{err}");
        (printed, err)
    }

    /// `serve --stdio` importing the server as `name`, initialized: a long session.
    fn session(&self, name: &str) -> Stdio_ {
        let import = format!("{name}={}", self.url);
        let store = self.store();
        Stdio_::start(&mut toolsmith(
            &["--store", &store, "--import-mcp", &import, "serve", "--stdio"],
            self.dir.path(),
        ))
    }

    /// Every client id either authorization server saw, and the secrets either gave out, checked
    /// against `outputs`.
    fn assert_no_secret(&self, outputs: &[String]) {
        assert_no_secret(&self.first, outputs);
        assert_no_secret(&self.second, outputs);
    }
}

/// `tools/call` of the imported `convert-units` (100 °C in °F) in `session`, with request id `id`.
fn convert(session: &mut Stdio_, id: u64, tool: &str) -> Value {
    session.request(
        id,
        "tools/call",
        json!({"name": tool, "arguments": {"value": 100, "from": "C", "to": "F"}}),
    )
}

/// Ends `session`; its stderr.
fn end(mut session: Stdio_) -> String {
    drop(session.child.stdin.take());
    let _ = session.child.kill();
    let out = session.child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The client ids registered with `auth`.
fn presented(auth: &Auth) -> Vec<String> {
    auth.state.lock().unwrap().presented.clone()
}

#[test]
fn a_user_login_is_not_carried_to_a_new_authorization_server_and_mcp_login_registers_with_it() {
    let mut moving = Moving::new();
    let store = moving.store();
    let (printed, err) = moving.log_in_user();
    let mut outputs = vec![printed, err];
    let old_clients = presented(&moving.first);
    assert!(!old_clients.is_empty());

    // A long session: a call, the server moves, the next call fails naming the login.
    let mut session = moving.session("crm");
    let first = convert(&mut session, 2, "crm_convert-units");
    assert!(first.to_string().contains("212"), "{first}");
    moving.migrate();
    let second = convert(&mut session, 3, "crm_convert-units").to_string();
    let named = format!("now names the authorization server {}", moving.second.issuer);
    let again = format!("log in again with `toolsmith mcp login crm {}`", moving.url);
    assert!(second.contains(&named) && second.contains(&again), "{second}");
    outputs.extend([second, end(session)]);

    // A new import: refused before its session starts, with the same words.
    let import = format!("crm={}", moving.url);
    let call = convert_call(&store, &import, "crm_convert-units");
    let (ok, stdout, stderr) = run(&call, moving.dir.path());
    assert!(!ok && stderr.contains(&named) && stderr.contains(&again), "{stdout}\n{stderr}");
    outputs.extend([stdout, stderr]);
    // Nothing was sent to the new authorization server: no client id, no registration.
    assert!(presented(&moving.second).is_empty(), "{:?}", presented(&moving.second));
    assert!(moving.second.state.lock().unwrap().clients.is_empty());

    // `mcp login` again registers with the new server (a client of its own) and says so.
    let (printed, err) = moving.log_in_user();
    assert!(
        printed.contains(&format!("no longer names the authorization server {}", moving.first.issuer)),
        "{printed}"
    );
    outputs.extend([printed, err]);
    let new_clients: Vec<String> = moving.second.state.lock().unwrap().clients.keys().cloned().collect();
    assert_eq!(new_clients.len(), 1, "registered with the new server");
    let seen = presented(&moving.second);
    assert!(!seen.is_empty() && seen.iter().all(|c| *c == new_clients[0]), "{seen:?}");
    assert!(seen.iter().all(|c| !old_clients.contains(c)), "{seen:?} {old_clients:?}");

    let (ok, stdout, stderr) = run(&call, moving.dir.path());
    assert!(ok && stdout.contains("212"), "{stdout}\n{stderr}");
    outputs.extend([stdout, stderr]);
    moving.assert_no_secret(&outputs);
}

#[test]
fn a_machine_with_a_portable_client_id_moves_to_the_new_authorization_server_by_itself() {
    let mut moving = Moving::new();
    let client_id = "https://client.example/toolsmith.json";
    for auth in [&moving.first, &moving.second] {
        let mut s = auth.state.lock().unwrap();
        s.signer_key = Some(SIGNER_PUBLIC.to_owned());
        s.signer_id = Some(client_id.to_owned());
        s.secrets
            .extend(SIGNER_KEY.lines().filter(|l| !l.starts_with("-----")).map(str::to_owned));
    }
    let store = moving.store();
    let url = moving.url.clone();
    let key_file = moving.dir.path().join("signer.pem");
    std::fs::write(&key_file, SIGNER_KEY).unwrap();
    let login = [
        "--store",
        &store,
        "mcp",
        "login",
        "signed",
        &url,
        "--client-credentials",
        "--client-id",
        client_id,
        "--client-key-file",
        key_file.to_str().unwrap(),
    ];
    let (ok, stdout, stderr) = run(&login, moving.dir.path());
    assert!(ok, "{stdout}\n{stderr}");
    let mut outputs = vec![stdout, stderr];

    let mut session = moving.session("signed");
    let first = convert(&mut session, 2, "signed_convert-units");
    assert!(first.to_string().contains("212"), "{first}");
    moving.migrate();
    // The next call: refused by the moved server, the client moves and the call passes.
    let second = convert(&mut session, 3, "signed_convert-units");
    assert!(second.to_string().contains("212"), "{second}");
    outputs.push(end(session));
    // (Each authorization server checked the assertion's audience: its own issuer.)
    assert_eq!(moving.first.state.lock().unwrap().assertions, 1);
    assert_eq!(moving.second.state.lock().unwrap().assertions, 1);

    // The move is stored: a new import uses the new server's token as it is.
    let import = format!("signed={}", moving.url);
    let (ok, stdout, stderr) = run(&convert_call(&store, &import, "signed_convert-units"), moving.dir.path());
    assert!(ok && stdout.contains("212"), "{stdout}\n{stderr}");
    assert_eq!(moving.second.state.lock().unwrap().assertions, 1, "the stored token was used");
    assert_eq!(moving.first.state.lock().unwrap().assertions, 1, "nothing more at the old server");
    outputs.extend([stdout, stderr]);
    moving.assert_no_secret(&outputs);
}

#[test]
fn a_machine_with_a_secret_is_told_to_log_in_with_a_client_of_the_new_server_and_sends_it_nothing() {
    let mut moving = Moving::new();
    let store = moving.store();
    let url = moving.url.clone();
    let secret = "machine-secret-CANARY";
    moving.first.state.lock().unwrap().secrets.push(secret.into());
    let login = [
        "--store",
        &store,
        "mcp",
        "login",
        "ci",
        &url,
        "--client-credentials",
        "--client-id",
        "machine",
        "--client-secret-env",
        "CI_SECRET",
    ];
    let out = toolsmith(&login, moving.dir.path()).env("CI_SECRET", secret).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));

    let mut session = moving.session("ci");
    let first = convert(&mut session, 2, "ci_convert-units");
    assert!(first.to_string().contains("212"), "{first}");
    moving.migrate();
    let second = convert(&mut session, 3, "ci_convert-units").to_string();
    let wanted = format!(
        "log in again with a client registered with {}: `toolsmith mcp login ci {} --client-credentials --client-id ID`",
        moving.second.issuer, moving.url
    );
    assert!(second.contains(&wanted), "{second}");
    let mut outputs = vec![second, end(session)];

    let import = format!("ci={}", moving.url);
    let (ok, stdout, stderr) = run(&convert_call(&store, &import, "ci_convert-units"), moving.dir.path());
    assert!(!ok && stderr.contains(&wanted), "{stdout}\n{stderr}");
    outputs.extend([stdout, stderr]);
    // The new authorization server never saw the machine's id nor its secret.
    assert!(presented(&moving.second).is_empty(), "{:?}", presented(&moving.second));
    assert!(moving.second.state.lock().unwrap().machine_grants.is_empty());
    moving.assert_no_secret(&outputs);
}

#[test]
fn with_interactive_login_a_new_import_logs_in_with_the_new_authorization_server_by_itself() {
    let mut moving = Moving::new();
    let store = moving.store();
    let url = moving.url.clone();
    let (printed, err) = moving.log_in_user();
    moving.migrate();
    let import = format!("crm={url}");
    let mut call = convert_call(&store, &import, "crm_convert-units").to_vec();
    call.insert(4, "--interactive-login=print");
    let (ok, stdout, stderr, opened) = run_as_browser_in(&call, moving.dir.path(), &moving.rt);
    assert!(opened && ok && stdout.contains("212"), "{stdout}\n{stderr}");
    assert_eq!(
        moving.second.state.lock().unwrap().clients.len(),
        1,
        "registered with the new server"
    );
    let old: Vec<String> = moving.first.state.lock().unwrap().clients.keys().cloned().collect();
    assert!(presented(&moving.second).iter().all(|c| !old.contains(c)));
    moving.assert_no_secret(&[printed, err, stdout, stderr]);
}
