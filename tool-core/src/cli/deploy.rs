//! The flags of `serve --http` for a deployment: list caching hints, SSE keep-alive, graceful
//! shutdown, TLS (flattened into `serve`'s arguments), and the durations they take.

use std::path::PathBuf;
use std::time::Duration;

use crate::mcp::http::HttpOptions;

/// How `serve --http` is deployed.
#[derive(Debug, clap::Args)]
#[command(next_help_heading = "TLS and deployment")]
pub(super) struct DeployArgs {
    /// How long a client may treat `tools/list` as fresh (`5m`, `30s`, `0`).
    ///
    /// The `ttlMs` of a 2026-07-28 `tools/list` result; `0` is immediately stale. Default: 0 when
    /// the tool set can change (imported or provider tools), 10 minutes for the linked tools alone.
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    list_ttl: Option<Duration>,
    /// Keep-alive comment interval on idle SSE streams (`15s`, `off`).
    ///
    /// An SSE stream with nothing to send carries a keep-alive comment this often; `off` for never.
    /// Keep it below your proxy's read timeout.
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = keep_alive, conflicts_with = "stdio")]
    sse_keep_alive: KeepAlive,
    /// Time calls in flight get to finish on SIGTERM or Ctrl-C.
    ///
    /// No new connections are accepted meanwhile; then what still runs is cancelled and the server
    /// exits. Calls waiting for approval or a resume stay in the store.
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = duration, conflicts_with = "stdio")]
    shutdown_grace: Duration,
    /// Serve HTTPS with this certificate chain (PEM, leaf first). Requires --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key", conflicts_with = "stdio")]
    tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM: PKCS#8, PKCS#1 or SEC1).
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Allow plain HTTP on a non-loopback address (TLS ends at a proxy).
    ///
    /// Without it, plain HTTP on an address other than loopback is refused at start: MCP requires
    /// HTTPS there.
    #[arg(long, conflicts_with = "tls_cert")]
    insecure_http: bool,
}

/// `--sse-keep-alive`: an interval, or `off`.
#[derive(Debug, Clone, Copy)]
pub(super) struct KeepAlive(Option<Duration>);

impl DeployArgs {
    /// The list TTL asked for, if any.
    pub(super) fn list_ttl(&self) -> Option<Duration> {
        self.list_ttl
    }

    /// Sets what these flags say on `options`.
    pub(super) fn apply(&self, options: &mut HttpOptions) {
        options.sse_keep_alive = self.sse_keep_alive.0;
        options.shutdown_grace = self.shutdown_grace;
        options.insecure_http = self.insecure_http;
        if let (Some(cert), Some(key)) = (&self.tls_cert, &self.tls_key) {
            options.tls = Some(crate::mcp::tls::TlsFiles {
                cert: cert.clone(),
                key: key.clone(),
            });
        }
    }

    /// Whether the server speaks HTTPS (for the address it prints).
    pub(super) fn https(&self) -> bool {
        self.tls_cert.is_some()
    }
}

fn keep_alive(text: &str) -> Result<KeepAlive, String> {
    if text.eq_ignore_ascii_case("off") {
        return Ok(KeepAlive(None));
    }
    match duration(text)? {
        d if d.is_zero() => Err("must be longer than zero (`off` turns keep-alive comments off)".into()),
        d => Ok(KeepAlive(Some(d))),
    }
}

/// A duration: a number with a unit (`ms`, `s`, `m`, `h`), or a bare number of seconds; at
/// most a year.
pub(super) fn duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a duration: write e.g. `500ms`, `15s`, `5m` or `1h`"))?;
    let seconds = match unit.trim() {
        "ms" => number / 1000.0,
        "" | "s" => number,
        "m" | "min" => number * 60.0,
        "h" => number * 3600.0,
        other => return Err(format!("`{other}` is not a unit of duration: use ms, s, m or h")),
    };
    if !(seconds.is_finite() && (0.0..=31_536_000.0).contains(&seconds)) {
        return Err(format!("`{text}` must be between 0 and a year"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_units() {
        assert_eq!(duration("15s"), Ok(Duration::from_secs(15)));
        assert_eq!(duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(duration("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(duration("2"), Ok(Duration::from_secs(2)));
        assert_eq!(duration("0"), Ok(Duration::ZERO));
        for bad in ["", "s", "-1s", "5 days", "1e30", "nan"] {
            assert!(duration(bad).is_err(), "{bad}");
        }
        assert!(keep_alive("off").unwrap().0.is_none());
        assert!(keep_alive("0s").is_err());
    }
}
