//! Serves the Composio or Arcade fake that the provider tests use, for the official SDKs'
//! contract runs (`tests/providers/run.sh`):
//!
//! ```sh
//! cargo run -p tool-providers --example serve_fake -- composio --key ak_… --url-file /tmp/url --secs 600
//! ```
//!
//! It writes the fake's URL to `--url-file` once it listens, and serves for `--secs` seconds
//! (default 60) with the given key. Seeds: Composio — `sdk-user` has an active GitHub account;
//! Arcade — `sdk-user` has authorized Github and holds connections `uc_0001` (github, active)
//! and `uc_0002` (google, active); `sdk-other` holds `uc_0003` (github, active).

#[path = "../tests/support"]
mod support {
    pub mod arcade_fake;
    pub mod composio_fake;
    pub mod misbehave;
}

use std::process::ExitCode;
use std::time::Duration;

use support::arcade_fake::ArcadeFake;
use support::composio_fake::ComposioFake;

const USAGE: &str = "usage: serve_fake composio|arcade --key KEY [--url-file FILE] [--secs N]";

struct Args {
    provider: String,
    key: String,
    url_file: Option<String>,
    secs: u64,
}

fn args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let provider = it.next().ok_or(USAGE)?;
    let (mut key, mut url_file, mut secs) = (None, None, 60);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value; {USAGE}"))?;
        match flag.as_str() {
            "--key" => key = Some(value),
            "--url-file" => url_file = Some(value),
            "--secs" => secs = value.parse().map_err(|e| format!("--secs: {e}"))?,
            other => return Err(format!("unknown flag {other}; {USAGE}")),
        }
    }
    let key = key.ok_or_else(|| format!("--key is required; {USAGE}"))?;
    Ok(Args {
        provider,
        key,
        url_file,
        secs,
    })
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = match args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    // Each fake stops when dropped: both live until the end of `main`.
    let (url, _composio, _arcade) = match args.provider.as_str() {
        "composio" => {
            let fake = ComposioFake::start(&args.key).await;
            fake.add_account("sdk-user", "github", "ACTIVE");
            (fake.url.clone(), Some(fake), None)
        }
        "arcade" => {
            let fake = ArcadeFake::start(&args.key).await;
            fake.grant("sdk-user", "Github");
            fake.add_connection("sdk-user", "github", "active");
            fake.add_connection("sdk-user", "google", "active");
            fake.add_connection("sdk-other", "github", "active");
            (fake.url.clone(), None, Some(fake))
        }
        other => {
            eprintln!("no fake for `{other}`; {USAGE}");
            return ExitCode::from(2);
        }
    };
    match &args.url_file {
        Some(path) => {
            if let Err(e) = std::fs::write(path, &url) {
                eprintln!("cannot write {path}: {e}");
                return ExitCode::FAILURE;
            }
        }
        None => println!("{url}"),
    }
    tokio::time::sleep(Duration::from_secs(args.secs)).await;
    ExitCode::SUCCESS
}
