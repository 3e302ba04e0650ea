//! The MCP server over stdio: one JSON-RPC message per line.
//!
//! Owns [`serve`] and [`serve_io`]. Lines pass through a guard before `rmcp` sees them: a line
//! that is not JSON is answered with a JSON-RPC `-32700` error and one that is not a JSON-RPC
//! message with `-32600` (rmcp alone would drop them silently); the answers and rmcp's own
//! messages share one writer, a line at a time.

use rmcp::{ServerHandler, ServiceExt};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

use super::McpServer;

/// Longest accepted line (16 MiB); a longer one is refused and skipped.
const MAX_LINE: usize = 16 << 20;

fn error_line(id: Value, code: i64, message: String) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}

/// Serves on the process's stdin and stdout until stdin closes.
pub async fn serve<E: ServerHandler + Clone + Send + Sync + 'static>(server: McpServer<E>) -> std::io::Result<()> {
    serve_io(server, tokio::io::stdin(), tokio::io::stdout()).await
}

/// Serves on any reader and writer (stdio, pipes, test buffers).
pub async fn serve_io<E, R, W>(server: McpServer<E>, input: R, output: W) -> std::io::Result<()>
where
    E: ServerHandler + Clone + Send + Sync + 'static,
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (to_rmcp, rmcp_in) = tokio::io::duplex(1 << 16);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(1 << 16);
    let (lines_tx, lines_rx) = mpsc::unbounded_channel::<String>();

    // One writer: every outgoing line, whole.
    let writer = tokio::spawn(write_lines(output, lines_rx));
    // rmcp's messages, a line at a time.
    let from_server = lines_tx.clone();
    let forward = tokio::spawn(async move {
        let mut lines = BufReader::new(from_rmcp).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if from_server.send(line).is_err() {
                break;
            }
        }
    });
    // The client's lines: valid messages to rmcp, the rest answered here.
    let reader = tokio::spawn(read_client(input, to_rmcp, lines_tx));

    // Its own log level and call limit, even when clones of one server serve several streams.
    let running = server
        .for_new_session()
        .serve((rmcp_in, rmcp_out))
        .await
        .map_err(|e| std::io::Error::other(format!("the MCP session could not start: {e}")))?;
    let _ = running.waiting().await;
    reader.abort();
    let _ = forward.await;
    // Every sender is gone now: the writer drains what is left and ends.
    match writer.await {
        Ok(r) => r,
        Err(e) => Err(std::io::Error::other(e)),
    }
}

/// Writes every line it receives, whole, until every sender is gone.
async fn write_lines<W: AsyncWrite + Unpin>(mut output: W, mut lines: mpsc::UnboundedReceiver<String>) -> std::io::Result<()> {
    while let Some(line) = lines.recv().await {
        output.write_all(line.as_bytes()).await?;
        output.write_all(b"\n").await?;
        output.flush().await?;
    }
    Ok(())
}

/// Reads the client's lines: a valid message goes on to rmcp, anything else (too long, not
/// JSON, not a JSON-RPC message) is answered with an error line at once.
async fn read_client<R: AsyncRead + Unpin>(
    input: R,
    mut to_rmcp: DuplexStream,
    errors: mpsc::UnboundedSender<String>,
) -> std::io::Result<()> {
    let mut input = BufReader::new(input);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = AsyncReadExt::take(&mut input, MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut buf)
            .await?;
        if n == 0 {
            break;
        }
        if buf.len() > MAX_LINE && !buf.ends_with(b"\n") {
            // Skip the rest of the oversized line.
            let mut rest = Vec::new();
            input.read_until(b'\n', &mut rest).await?;
            let _ = errors.send(error_line(
                Value::Null,
                -32600,
                format!("Invalid request: a message is longer than {MAX_LINE} bytes"),
            ));
            continue;
        }
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let answer = match super::body::parse(line.as_bytes()) {
            Err(r) => Some(error_line(r.id, r.code, r.message)),
            Ok(v) => super::http::invalid_message(&v).map(|(id, why)| error_line(id, -32600, format!("Invalid request: {why}"))),
        };
        match answer {
            Some(a) => {
                let _ = errors.send(a);
            }
            None => {
                to_rmcp.write_all(line.as_bytes()).await?;
                to_rmcp.write_all(b"\n").await?;
            }
        }
    }
    to_rmcp.shutdown().await
}
