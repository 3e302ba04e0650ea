//! Every tracing line a test's thread produces (TRACE and up, the HTTP and MCP libraries'
//! included), for the secret canaries.

#![allow(dead_code)]

use std::sync::{Arc, Mutex};

use tracing::subscriber::DefaultGuard;

#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The lines captured so far; capturing lasts as long as this value.
pub struct Logs {
    buffer: Buffer,
    _guard: DefaultGuard,
}

/// Starts capturing this thread's tracing output (a current-thread test runtime sees its
/// spawned tasks' lines too).
pub fn capture() -> Logs {
    let buffer = Buffer::default();
    let writer = buffer.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    Logs {
        buffer,
        _guard: tracing::subscriber::set_default(subscriber),
    }
}

impl Logs {
    /// Everything captured, as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.buffer.0.lock().unwrap()).into_owned()
    }
}
