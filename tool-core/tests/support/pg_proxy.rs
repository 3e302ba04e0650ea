//! A TCP proxy between a server under test and PostgreSQL that can cut the database away: at
//! once ([`PgProxy::cut`]), or the moment a given statement passes through it
//! ([`PgProxy::cut_when`]: the statement is not forwarded), and give it back
//! ([`PgProxy::restore`]). While cut, every open connection is closed and new ones are closed
//! as soon as they are accepted, as when the database's host goes away.
//!
//! tokio-postgres sends each statement's text in its Parse message (the stores use unnamed
//! statements), so a statement is recognised by a fragment of its SQL in the bytes a client
//! sends.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

/// The proxy; it runs until dropped.
pub struct PgProxy {
    addr: SocketAddr,
    state: Arc<State>,
    accept: tokio::task::JoinHandle<()>,
}

struct State {
    upstream: String,
    /// `true` while cut; every change wakes the open connections (which end when cut).
    cut: watch::Sender<bool>,
    /// The fragment whose passing cuts the database away (once), when armed.
    trigger: Mutex<Option<Vec<u8>>>,
}

impl Drop for PgProxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.state.cut.send_replace(true);
    }
}

impl PgProxy {
    /// A proxy in front of `upstream` (`host:port`), listening on a free loopback port.
    pub async fn start(upstream: &str) -> PgProxy {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("a free port");
        let addr = listener.local_addr().expect("its address");
        let state = Arc::new(State {
            upstream: upstream.to_owned(),
            cut: watch::channel(false).0,
            trigger: Mutex::new(None),
        });
        let accepting = state.clone();
        let accept = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                if *accepting.cut.borrow() {
                    drop(client);
                    continue;
                }
                tokio::spawn(connection(accepting.clone(), client));
            }
        });
        PgProxy { addr, state, accept }
    }

    /// `url` (a `postgres://` URL) pointed at this proxy instead of its host and port.
    pub fn url(&self, url: &str) -> String {
        let (scheme, rest) = url.split_once("://").expect("a URL");
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let user = authority.rsplit_once('@').map_or(String::new(), |(user, _)| format!("{user}@"));
        format!("{scheme}://{user}{}/{path}", self.addr)
    }

    /// Cuts the database away now.
    pub fn cut(&self) {
        self.state.cut.send_replace(true);
    }

    /// Cuts the database away the moment a client sends a statement containing `fragment`
    /// (that statement never reaches it).
    pub fn cut_when(&self, fragment: &str) {
        *self.state.trigger.lock().unwrap() = Some(fragment.as_bytes().to_vec());
    }

    /// Whether the database is cut away now.
    pub fn is_cut(&self) -> bool {
        *self.state.cut.borrow()
    }

    /// Gives the database back (and disarms a trigger that has not fired).
    pub fn restore(&self) {
        *self.state.trigger.lock().unwrap() = None;
        self.state.cut.send_replace(false);
    }
}

/// `host:port` of a `postgres://` URL.
pub fn host_port(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?']).next().unwrap_or(rest);
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    if host.contains(':') {
        host.to_owned()
    } else {
        format!("{host}:5432")
    }
}

/// One client connection, piped to the database until either side closes or the proxy cuts.
async fn connection(state: Arc<State>, client: TcpStream) {
    let Ok(server) = TcpStream::connect(&state.upstream).await else {
        return;
    };
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let mut cut = state.cut.subscribe();
    let upstream = async {
        let mut buf = vec![0u8; 64 * 1024];
        // The tail of what was sent before, so a fragment split across reads is still seen.
        let mut tail: Vec<u8> = Vec::new();
        loop {
            let n = match client_read.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            let chunk = &buf[..n];
            let fired = {
                let mut trigger = state.trigger.lock().unwrap();
                let seen = trigger.as_ref().is_some_and(|fragment| {
                    let mut window = tail.clone();
                    window.extend_from_slice(chunk);
                    window.windows(fragment.len()).any(|w| w == fragment.as_slice())
                });
                if seen {
                    *trigger = None;
                }
                seen
            };
            if fired {
                state.cut.send_replace(true);
                return;
            }
            if server_write.write_all(chunk).await.is_err() {
                return;
            }
            tail.extend_from_slice(chunk);
            let keep = tail.len().saturating_sub(4096);
            tail.drain(..keep);
        }
    };
    let downstream = async {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match server_read.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    if client_write.write_all(&buf[..n]).await.is_err() {
                        return;
                    }
                }
            }
        }
    };
    let cut_away = async {
        while !*cut.borrow_and_update() {
            if cut.changed().await.is_err() {
                return;
            }
        }
    };
    tokio::select! {
        () = upstream => {}
        () = downstream => {}
        () = cut_away => {}
    }
}
