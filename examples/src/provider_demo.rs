//! What the provider example programs share: the API key from the environment (never a flag)
//! and `--base-url URL` for a self-hosted or test server.

/// The key in `variable`, or a message saying to set it.
pub fn api_key(variable: &str) -> Result<String, String> {
    std::env::var(variable)
        .ok()
        .filter(|k| !k.trim().is_empty())
        .ok_or_else(|| format!("set {variable} to your API key"))
}

/// `--base-url URL` from the process arguments, if given.
pub fn base_url() -> Result<Option<String>, String> {
    let mut args = std::env::args().skip(1);
    let mut url = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--base-url" => url = Some(args.next().ok_or("--base-url needs a URL")?),
            other => return Err(format!("unknown argument `{other}` (only --base-url URL)")),
        }
    }
    Ok(url)
}

/// Runs a demo's `main` body, printing its error and exiting with 1 on failure.
pub fn run<F: std::future::Future<Output = Result<(), String>>>(body: F) -> std::process::ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(body) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
