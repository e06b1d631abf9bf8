//! `StdioTransport`: MCP over stdin/stdout, one JSON-RPC message per line, that answers every
//! request it is sent. Lines are read in bounded chunks: a line over
//! [`MAX_MCP_MESSAGE_BYTES`](super::MAX_MCP_MESSAGE_BYTES) is scanned for its id as it
//! passes and dropped, never held; each line is judged by `IncomingMessage` and a refused one
//! is answered here, so rmcp's service only ever sees messages it can serve.
//!
//! Invariants: memory per line is bounded by the limit; a refusal and rmcp's own answers go
//! out through one writer task, whole lines, in the order they are queued; a `receive`
//! cancelled by rmcp's `select!` loses nothing (the line so far, its scan and a refusal not yet
//! queued live on the transport); at the end of input, whatever is queued is written before
//! `close` returns.

use std::time::Duration;

use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use super::incoming_message::{IncomingMessage, MAX_MCP_MESSAGE_BYTES};
use super::message_scan::MessageScan;

/// Lines queued for the writer before a sender waits.
const QUEUED_LINES: usize = 64;

/// How long `close` waits for queued lines to be written.
const DRAIN: Duration = Duration::from_secs(5);

/// Bytes read from stdin at a time.
const READ_CHUNK: usize = 64 << 10;

pub struct StdioTransport<R> {
    read: BufReader<R>,
    /// The line so far, while it is within the limit.
    line: Vec<u8>,
    /// Every byte of the line so far, even past the limit.
    scan: MessageScan,
    limit: usize,
    out: Option<mpsc::Sender<Vec<u8>>>,
    /// A refusal's line not yet queued.
    pending: Option<Vec<u8>>,
    writer: Option<tokio::task::JoinHandle<()>>,
}

/// The end of one bounded read.
enum LineEnd {
    /// A line is complete (its newline, or the end of input after some bytes).
    Line,
    Eof,
}

impl<R: AsyncRead + Send + Unpin> StdioTransport<R> {
    /// Reads `read`, writes `write` (from a task of its own: call within a tokio runtime).
    pub fn new<W: AsyncWrite + Send + Unpin + 'static>(read: R, write: W) -> StdioTransport<R> {
        let (tx, rx) = mpsc::channel(QUEUED_LINES);
        StdioTransport {
            read: BufReader::with_capacity(READ_CHUNK, read),
            line: Vec::new(),
            scan: MessageScan::default(),
            limit: MAX_MCP_MESSAGE_BYTES,
            out: Some(tx),
            pending: None,
            writer: Some(tokio::spawn(write_lines(rx, write))),
        }
    }

    /// The same, with another line limit (tests).
    pub fn with_limit(mut self, limit: usize) -> StdioTransport<R> {
        self.limit = limit;
        self
    }

    /// Reads up to the end of the next line, keeping it while it is within the limit and
    /// scanning all of it. Cancel-safe: a dropped call leaves the line so far in place.
    async fn read_line(&mut self) -> std::io::Result<LineEnd> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                let partial = self.scan.bytes() > 0;
                return Ok(if partial { LineEnd::Line } else { LineEnd::Eof });
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let chunk = &available[..take];
            self.scan.feed(chunk);
            if self.scan.bytes() <= self.limit {
                self.line.extend_from_slice(chunk);
            } else if !self.line.is_empty() {
                self.line = Vec::new();
            }
            self.read.consume(take);
            if newline.is_some() {
                return Ok(LineEnd::Line);
            }
        }
    }

    /// Queues the refusal waiting, if any. Cancel-safe: the line stays pending until a slot
    /// in the queue is held.
    async fn queue_pending(&mut self) -> Option<()> {
        if self.pending.is_some() {
            let permit = self.out.as_ref()?.reserve().await.ok()?;
            if let Some(line) = self.pending.take() {
                permit.send(line);
            }
        }
        Some(())
    }
}

/// One message as a line of JSON.
fn line_of(m: &TxJsonRpcMessage<RoleServer>) -> std::io::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(m)?;
    line.push(b'\n');
    Ok(line)
}

/// Writes each queued line whole and flushes it, until every sender is gone or stdout fails.
async fn write_lines<W: AsyncWrite + Unpin>(mut rx: mpsc::Receiver<Vec<u8>>, mut write: W) {
    while let Some(line) = rx.recv().await {
        if let Err(e) = async {
            write.write_all(&line).await?;
            write.flush().await
        }
        .await
        {
            tracing::error!("writing an MCP message failed: {e}");
            return;
        }
    }
}

impl<R: AsyncRead + Send + Unpin> Transport<RoleServer> for StdioTransport<R> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let out = self.out.clone();
        let line = line_of(&item);
        async move {
            let closed = || std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the MCP output is closed");
            let out = out.ok_or_else(closed)?;
            out.send(line?).await.map_err(|_| closed())
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            self.queue_pending().await?;
            match self.read_line().await {
                Ok(LineEnd::Line) => {}
                Ok(LineEnd::Eof) => return None,
                Err(e) => {
                    tracing::error!("reading MCP input failed: {e}");
                    return None;
                }
            }
            let scan = std::mem::take(&mut self.scan);
            let mut line = std::mem::take(&mut self.line);
            while matches!(line.last(), Some(b'\n' | b'\r')) {
                line.pop();
            }
            if scan.bytes() <= self.limit && line.trim_ascii().is_empty() {
                continue;
            }
            match IncomingMessage::read(&line, &scan, self.limit) {
                IncomingMessage::Serve(m) => return Some(*m),
                IncomingMessage::Drop(why) => tracing::debug!("dropped an MCP message: {why}"),
                IncomingMessage::Refuse(r) => {
                    tracing::warn!("refused an MCP message: {}", r.error.message);
                    match line_of(&r.message()) {
                        Ok(l) => self.pending = Some(l),
                        Err(e) => tracing::error!("writing a refusal failed: {e}"),
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // The writer ends once every sender (ours and those of sends under way) is gone.
        self.out = None;
        if let Some(writer) = self.writer.take()
            && tokio::time::timeout(DRAIN, writer).await.is_err()
        {
            tracing::warn!("MCP output not drained within {} s", DRAIN.as_secs());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `input` to a transport and collects what it serves and what it writes back.
    async fn run(input: Vec<u8>, limit: usize) -> (Vec<String>, Vec<serde_json::Value>) {
        let (out_w, out_r) = tokio::io::duplex(1 << 20);
        let mut t = StdioTransport::new(std::io::Cursor::new(input), out_w).with_limit(limit);
        let mut served = Vec::new();
        while let Some(m) = t.receive().await {
            served.push(serde_json::to_value(&m).unwrap()["method"].to_string());
        }
        t.close().await.unwrap();
        drop(t);
        let mut lines = tokio::io::BufReader::new(out_r).lines();
        let mut written = Vec::new();
        while let Some(l) = lines.next_line().await.unwrap() {
            written.push(serde_json::from_str(&l).unwrap());
        }
        (served, written)
    }

    #[tokio::test]
    async fn every_malformed_line_is_answered_and_the_next_one_served() {
        let mut input = Vec::new();
        input.extend_from_slice(
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"q\":\"",
        );
        input.extend_from_slice(&vec![b'a'; 5000]);
        input.extend_from_slice(b"\"}}\n");
        input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"x\":\"\xff\"}\n");
        input.extend_from_slice(b"\n\r\n{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}\n");
        input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":5}");
        let (served, written) = run(input, 1000).await;
        assert_eq!(served, ["\"ping\""]);
        let ids: Vec<&serde_json::Value> = written.iter().map(|w| &w["id"]).collect();
        assert_eq!(ids, [1, 2, 4]);
        let codes: Vec<i64> = written
            .iter()
            .map(|w| w["error"]["code"].as_i64().unwrap())
            .collect();
        assert_eq!(codes, [-32600, -32700, -32602]);
    }

    #[tokio::test]
    async fn an_oversized_line_is_never_held_in_memory() {
        let mut input = b"{\"id\":7,\"method\":\"tools/call\",\"params\":{\"q\":\"".to_vec();
        input.extend_from_slice(&vec![b'a'; 3 << 20]);
        input.extend_from_slice(b"\"}}\n");
        let (out_w, _out_r) = tokio::io::duplex(1 << 16);
        let mut t = StdioTransport::new(std::io::Cursor::new(input), out_w).with_limit(1 << 20);
        // Read the line without serving it: its bytes past the limit were dropped as read.
        assert!(matches!(t.read_line().await.unwrap(), LineEnd::Line));
        assert!(t.line.is_empty() && t.line.capacity() <= (1 << 20) + READ_CHUNK);
        assert_eq!(t.scan.id(), Some(rmcp::model::RequestId::Number(7)));
    }
}
