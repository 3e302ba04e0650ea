//! A hand-written HTTP/1.1 client for the Streamable HTTP tests: one exchange per connection,
//! chunked and SSE bodies decoded as they arrive, a legacy session, and sessionless requests.

use super::*;

pub(crate) async fn start_http(server: McpServer, options: HttpOptions) -> Served {
    http_server::serve(server, options).await
}

enum Framing {
    Length(usize),
    Chunked { left_in_chunk: usize, done: bool },
    UntilClose,
}

/// One HTTP/1.1 exchange on its own connection: the status and headers, then the body read
/// as it arrives.
pub(crate) struct HttpResponse {
    pub(super) status: u16,
    headers: Vec<(String, String)>,
    reader: BufReader<TcpStream>,
    framing: Framing,
    /// Decoded body bytes not yet consumed as SSE lines.
    pending: Vec<u8>,
}

/// Sends one request. `Host`, `Accept`, `Content-Type` and `Content-Length` are added unless
/// `headers` names them; the connection closes after the response.
pub(crate) async fn http(addr: SocketAddr, method: &str, headers: &[(&str, &str)], body: &str) -> HttpResponse {
    let has = |name: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
    let mut head = format!("{method} /mcp HTTP/1.1\r\n");
    if !has("host") {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    if !has("accept") {
        head.push_str("Accept: application/json, text/event-stream\r\n");
    }
    if method == "POST" && !has("content-type") {
        head.push_str("Content-Type: application/json\r\n");
    }
    if method == "POST" || !body.is_empty() {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("Connection: close\r\n\r\n");
    // One write: a server that answers before reading the body (401, 413) then finds it all
    // read already, and closes without a reset that could lose its answer.
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(format!("{head}{body}").as_bytes()).await.unwrap();
    stream.flush().await.unwrap();
    let mut reader = BufReader::new(stream);

    let mut status_line = String::new();
    read_line(&mut reader, &mut status_line).await;
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP status line: {status_line:?}"));
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        read_line(&mut reader, &mut line).await;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (k, v) = line.split_once(':').unwrap_or_else(|| panic!("not a header: {line:?}"));
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_owned()));
    }
    let header = |name: &str| headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone());
    let framing = if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        Framing::Chunked {
            left_in_chunk: 0,
            done: false,
        }
    } else if let Some(n) = header("content-length") {
        Framing::Length(n.parse().unwrap())
    } else {
        Framing::UntilClose
    };
    HttpResponse {
        status,
        headers,
        reader,
        framing,
        pending: Vec::new(),
    }
}

async fn read_line<R: AsyncRead + Unpin>(reader: &mut BufReader<R>, line: &mut String) {
    tokio::time::timeout(PATIENCE, reader.read_line(line))
        .await
        .expect("no response line in time")
        .expect("the connection failed");
}

impl HttpResponse {
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// The next piece of the decoded body; `None` at its end.
    async fn next_piece(&mut self) -> Option<Vec<u8>> {
        match &mut self.framing {
            Framing::Length(0) => None,
            Framing::Length(left) => {
                let mut buf = vec![0; (*left).min(8192)];
                let n = self.reader.read(&mut buf).await.unwrap();
                assert!(n > 0, "the body ended early");
                *left -= n;
                buf.truncate(n);
                Some(buf)
            }
            Framing::UntilClose => {
                let mut buf = vec![0; 8192];
                let n = self.reader.read(&mut buf).await.unwrap();
                buf.truncate(n);
                (n > 0).then_some(buf)
            }
            Framing::Chunked { done: true, .. } => None,
            Framing::Chunked { left_in_chunk, done } => {
                if *left_in_chunk == 0 {
                    let mut size = String::new();
                    self.reader.read_line(&mut size).await.unwrap();
                    let size = size.trim();
                    let size = size.split(';').next().unwrap();
                    let n = usize::from_str_radix(size, 16).unwrap_or_else(|_| panic!("not a chunk size: {size:?}"));
                    if n == 0 {
                        *done = true;
                        return None;
                    }
                    *left_in_chunk = n;
                }
                let mut buf = vec![0; (*left_in_chunk).min(8192)];
                let n = self.reader.read(&mut buf).await.unwrap();
                assert!(n > 0, "the body ended inside a chunk");
                buf.truncate(n);
                *left_in_chunk -= n;
                if *left_in_chunk == 0 {
                    let mut crlf = [0u8; 2];
                    self.reader.read_exact(&mut crlf).await.unwrap();
                    assert_eq!(&crlf, b"\r\n", "a chunk does not end with CRLF");
                }
                Some(buf)
            }
        }
    }

    /// The whole (rest of the) body as text.
    pub(super) async fn text(mut self) -> String {
        let mut all = std::mem::take(&mut self.pending);
        loop {
            match tokio::time::timeout(PATIENCE, self.next_piece())
                .await
                .expect("the body did not end in time")
            {
                Some(p) => all.extend(p),
                None => return String::from_utf8(all).unwrap(),
            }
        }
    }

    pub(super) async fn json(self) -> Value {
        let text = self.text().await;
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("the body is not JSON ({e}): {text}"))
    }

    /// The next JSON-RPC message of an SSE body (`data:` lines); `None` at the body's end.
    pub(super) async fn next_message(&mut self) -> Option<Value> {
        loop {
            if let Some(end) = self.pending.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=end).collect();
                let line = String::from_utf8(line).unwrap();
                if let Some(data) = line.trim_end().strip_prefix("data:") {
                    let data = data.trim();
                    if !data.is_empty() {
                        return Some(serde_json::from_str(data).unwrap_or_else(|e| panic!("SSE data is not JSON ({e}): {data}")));
                    }
                }
                continue;
            }
            let piece = tokio::time::timeout(PATIENCE, self.next_piece())
                .await
                .expect("no SSE message in time")?;
            self.pending.extend(piece);
        }
    }

    /// The next SSE message, or `None` when none comes within `wait`.
    pub(super) async fn try_next_message(&mut self, wait: Duration) -> Option<Value> {
        tokio::time::timeout(wait, self.next_message()).await.ok().flatten()
    }

    /// Reads SSE messages up to the response to `id`.
    pub(crate) async fn response_to(&mut self, id: u64) -> (Value, Vec<Value>) {
        let mut before = Vec::new();
        loop {
            let m = self
                .next_message()
                .await
                .unwrap_or_else(|| panic!("the stream ended before the response to {id}"));
            if is_response_to(&m, id) {
                return (m, before);
            }
            before.push(m);
        }
    }
}

/// A legacy (2025-06-18) Streamable HTTP session.
pub(super) struct HttpSession {
    pub(super) addr: SocketAddr,
    pub(super) id: String,
    token: Option<String>,
}

impl HttpSession {
    pub(super) async fn open(addr: SocketAddr, token: Option<&str>, capabilities: Value) -> HttpSession {
        let auth = token.map(|t| format!("Bearer {t}"));
        let mut headers = Vec::new();
        if let Some(a) = &auth {
            headers.push(("Authorization", a.as_str()));
        }
        let body = request(0, "initialize", initialize_params(capabilities)).to_string();
        let mut r = http(addr, "POST", &headers, &body).await;
        if r.status != 200 {
            let status = r.status;
            panic!("initialize failed with {status}: {}", r.text().await);
        }
        let id = r.header("mcp-session-id").expect("initialize gave no mcp-session-id").to_owned();
        let (init, _) = r.response_to(0).await;
        assert_eq!(result_of(&init)["protocolVersion"], LEGACY);
        let session = HttpSession {
            addr,
            id,
            token: token.map(str::to_owned),
        };
        let r = session
            .post(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert_eq!(r.status, 202, "initialized was not accepted");
        session
    }

    pub(super) async fn post(&self, message: &Value) -> HttpResponse {
        let auth = self.token.as_ref().map(|t| format!("Bearer {t}"));
        let mut headers = vec![("Mcp-Session-Id", self.id.as_str()), ("MCP-Protocol-Version", LEGACY)];
        if let Some(a) = &auth {
            headers.push(("Authorization", a.as_str()));
        }
        http(self.addr, "POST", &headers, &message.to_string()).await
    }

    pub(super) async fn request(&self, id: u64, method: &str, params: Value) -> (Value, Vec<Value>) {
        let mut r = self.post(&request(id, method, params)).await;
        assert_eq!(r.status, 200, "{method} failed");
        r.response_to(id).await
    }

    /// The session's standalone SSE stream (server-to-client messages outside any request).
    pub(super) async fn listen(&self) -> HttpResponse {
        let r = http(
            self.addr,
            "GET",
            &[
                ("Accept", "text/event-stream"),
                ("Mcp-Session-Id", self.id.as_str()),
                ("MCP-Protocol-Version", LEGACY),
            ],
            "",
        )
        .await;
        assert_eq!(r.status, 200, "the GET stream was refused");
        r
    }
}

pub(super) fn initialize_body() -> String {
    request(0, "initialize", initialize_params(json!({}))).to_string()
}

pub(super) const STATELESS_VERSION: &str = "2025-11-25";

pub(crate) fn stateless(json_response: bool) -> HttpOptions {
    HttpOptions {
        stateless: true,
        json_response,
        ..HttpOptions::default()
    }
}

/// One request without any session header.
pub(crate) async fn sessionless(addr: SocketAddr, message: &Value) -> HttpResponse {
    http(addr, "POST", &[("MCP-Protocol-Version", STATELESS_VERSION)], &message.to_string()).await
}
