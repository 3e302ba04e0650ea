//! The MCP server over stdio: one JSON-RPC message per line.
//!
//! Owns [`serve`] and [`serve_io`]. Lines pass through a guard before `rmcp` sees them: a line
//! that is not JSON is answered with a JSON-RPC `-32700` error, one that is not a JSON-RPC
//! message with `-32600` and an `initialize` with invalid params with `-32602` (rmcp alone
//! would drop them silently, or end the session); the answers and rmcp's own messages share
//! one writer, a line at a time. Lines are read in bounded chunks: one longer than the limit
//! is answered `-32600` as soon as the limit is passed, and the rest of it is discarded as it
//! arrives (never held), then the next line is served. The `tools/list` answers of a session
//! that negotiated 2025-11-25 get each tool's `execution` on their way out (`execution`).

use std::sync::Arc;

use rmcp::{ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

use super::McpServer;
use super::execution::{Execution, StdioListings};

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
    server.warm_up();
    let (to_rmcp, rmcp_in) = tokio::io::duplex(1 << 16);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(1 << 16);
    let (lines_tx, lines_rx) = mpsc::unbounded_channel::<String>();
    // The `tools/list` answers of a 2025-11-25 session get each tool's `execution`.
    let (listings, execution) = (Arc::new(StdioListings::default()), Execution::of(&server));

    // One writer: every outgoing line, whole.
    let writer = tokio::spawn(write_lines(output, lines_rx));
    // rmcp's messages, a line at a time.
    let from_server = lines_tx.clone();
    let seen = listings.clone();
    let forward = tokio::spawn(async move {
        let mut lines = BufReader::new(from_rmcp).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if from_server.send(seen.server_sends(&execution, line)).is_err() {
                break;
            }
        }
    });
    // The client's lines: valid messages to rmcp, the rest answered here.
    let reader = tokio::spawn(read_client(input, to_rmcp, lines_tx, listings));

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

/// One line of the client's, as [`next_line`] read it.
#[derive(Debug, PartialEq)]
enum Line {
    /// A whole line (without its newline) is in the buffer.
    Whole,
    /// The line is longer than the limit; what was read of it is dropped. `ended`: its newline
    /// was read too (otherwise the rest is still to be skipped).
    TooLong { ended: bool },
    /// The input ended.
    End,
}

/// Reads one line into `buf` in the reader's chunks, holding at most `max` bytes of it.
async fn next_line<R: AsyncBufRead + Unpin>(input: &mut R, buf: &mut Vec<u8>, max: usize) -> std::io::Result<Line> {
    buf.clear();
    loop {
        let chunk = input.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(if buf.is_empty() { Line::End } else { Line::Whole });
        }
        let newline = chunk.iter().position(|&b| b == b'\n');
        let content = newline.unwrap_or(chunk.len());
        if buf.len() + content > max {
            let used = newline.map_or(chunk.len(), |at| at + 1);
            input.consume(used);
            buf.clear();
            return Ok(Line::TooLong { ended: newline.is_some() });
        }
        buf.extend_from_slice(&chunk[..content]);
        input.consume(newline.map_or(content, |at| at + 1));
        if newline.is_some() {
            return Ok(Line::Whole);
        }
    }
}

/// Discards the input up to and including the next newline, a chunk at a time.
async fn skip_line<R: AsyncBufRead + Unpin>(input: &mut R) -> std::io::Result<()> {
    loop {
        let chunk = input.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(());
        }
        match chunk.iter().position(|&b| b == b'\n') {
            Some(at) => {
                input.consume(at + 1);
                return Ok(());
            }
            None => {
                let n = chunk.len();
                input.consume(n);
            }
        }
    }
}

/// The error line a line gets instead of going to rmcp (`None`: it goes on, noted in
/// `listings`).
fn refusal(line: &str, listings: &StdioListings) -> Option<String> {
    // Parsed once, refusing what is not JSON and objects that repeat a key (I-JSON).
    let refused = match super::body::parse(line.as_bytes()) {
        Err(r) => Some(("not JSON, or a repeated key", error_line(r.id, r.code, r.message))),
        Ok(v) => super::guard::invalid_message(&v)
            .map(|(id, why)| ("not a JSON-RPC message", error_line(id, -32600, format!("Invalid request: {why}"))))
            .or_else(|| super::guard::invalid_params(&v).map(|(id, why)| ("invalid initialize params", error_line(id, -32602, why))))
            .or_else(|| {
                listings.client_sent(&v);
                None
            }),
    };
    let (reason, answer) = refused?;
    tracing::warn!(reason, "refused an MCP stdio message");
    Some(answer)
}

/// Reads the client's lines: a valid message goes on to rmcp, anything else (too long, not
/// JSON, not a JSON-RPC message) is answered with an error line at once.
async fn read_client<R: AsyncRead + Unpin>(
    input: R,
    mut to_rmcp: DuplexStream,
    errors: mpsc::UnboundedSender<String>,
    listings: Arc<StdioListings>,
) -> std::io::Result<()> {
    let mut input = BufReader::new(input);
    let mut buf = Vec::new();
    loop {
        match next_line(&mut input, &mut buf, MAX_LINE).await? {
            Line::End => break,
            Line::TooLong { ended } => {
                tracing::warn!(limit = MAX_LINE, "refused an MCP stdio message: the line is too long");
                let _ = errors.send(error_line(
                    Value::Null,
                    -32600,
                    format!("Invalid request: a message is longer than {MAX_LINE} bytes"),
                ));
                if !ended {
                    skip_line(&mut input).await?;
                }
                continue;
            }
            Line::Whole => {}
        }
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        match refusal(line, &listings) {
            Some(answer) => {
                let _ = errors.send(answer);
            }
            None => {
                to_rmcp.write_all(line.as_bytes()).await?;
                to_rmcp.write_all(b"\n").await?;
            }
        }
    }
    to_rmcp.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn long_lines_are_refused_in_chunks_and_the_next_line_is_read() {
        // A reader handing out 4-byte chunks: the limit is checked chunk by chunk.
        let input = b"short\nthis line is too long\n\nlast".to_vec();
        let mut input = BufReader::with_capacity(4, &input[..]);
        let mut buf = Vec::new();
        assert_eq!(next_line(&mut input, &mut buf, 8).await.unwrap(), Line::Whole);
        assert_eq!(buf, b"short");
        assert_eq!(next_line(&mut input, &mut buf, 8).await.unwrap(), Line::TooLong { ended: false });
        assert!(buf.len() <= 8);
        skip_line(&mut input).await.unwrap();
        assert_eq!(next_line(&mut input, &mut buf, 8).await.unwrap(), Line::Whole);
        assert_eq!(buf, b"");
        assert_eq!(next_line(&mut input, &mut buf, 8).await.unwrap(), Line::Whole);
        assert_eq!(buf, b"last");
        assert_eq!(next_line(&mut input, &mut buf, 8).await.unwrap(), Line::End);
        // Exactly at the limit is accepted.
        let mut exact = BufReader::with_capacity(3, &b"12345678\n"[..]);
        assert_eq!(next_line(&mut exact, &mut buf, 8).await.unwrap(), Line::Whole);
        assert_eq!(buf, b"12345678");
    }
}
