//! The stdio transport: one JSON-RPC message per line on stdin/stdout (MCP stdio).
//!
//! rmcp's own stdio transport drops a line that is not JSON without a word; JSON-RPC 2.0 says
//! the reply is a parse error (`-32700`, `id: null`), so a client that sent a broken line
//! hears about it. A line that is JSON but not a JSON-RPC message gets `-32600` (with its id
//! when it has one); a notification nobody knows is ignored. A line longer than
//! [`MAX_LINE`] is discarded with a parse error.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::ClientJsonRpcMessage;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{Mutex, mpsc};

/// The longest line taken (16 MiB, as rmcp's stdio transport).
pub const MAX_LINE: usize = 16 * 1024 * 1024;

type Writer = Arc<Mutex<Box<dyn AsyncWrite + Send + Unpin>>>;

/// A line-delimited JSON-RPC transport over any reader and writer (stdin/stdout for MCP).
pub struct Lines {
    incoming: mpsc::Receiver<ClientJsonRpcMessage>,
    writer: Writer,
}

impl std::fmt::Debug for Lines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lines").finish_non_exhaustive()
    }
}

impl Lines {
    /// The process's stdin and stdout.
    pub fn stdio() -> Self {
        Self::new(tokio::io::stdin(), tokio::io::stdout())
    }

    /// Reads messages from `read` (a task parses them, replying to broken lines on `write`)
    /// and writes ours to `write`.
    pub fn new(
        read: impl AsyncRead + Send + Unpin + 'static,
        write: impl AsyncWrite + Send + Unpin + 'static,
    ) -> Self {
        let writer: Writer = Arc::new(Mutex::new(Box::new(write)));
        let (tx, incoming) = mpsc::channel(64);
        tokio::spawn(read_lines(BufReader::new(read), tx, writer.clone()));
        Self { incoming, writer }
    }
}

async fn write_line(writer: &Writer, line: &[u8]) -> std::io::Result<()> {
    let mut out = writer.lock().await;
    out.write_all(line).await?;
    out.write_all(b"\n").await?;
    out.flush().await
}

/// What to do with one line.
fn classify(line: &[u8]) -> Result<Option<ClientJsonRpcMessage>, Value> {
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(error) => {
            return Err(json!({"jsonrpc": "2.0", "id": null, "error": {
                "code": -32700,
                "message": format!("Parse error: the line is not JSON ({error})"),
            }}));
        }
    };
    let id = value.get("id").cloned();
    let method = value
        .get("method")
        .and_then(Value::as_str)
        .map(str::to_owned);
    match serde_json::from_value::<ClientJsonRpcMessage>(value) {
        Ok(message) => Ok(Some(message)),
        // A notification we cannot read (another protocol's, a newer one's): ignored.
        Err(_) if method.is_some() && id.is_none() => Ok(None),
        Err(error) => Err(
            json!({"jsonrpc": "2.0", "id": id.unwrap_or(Value::Null), "error": {
                "code": -32600,
                "message": format!("Invalid Request: not a JSON-RPC message this server reads ({error})"),
            }}),
        ),
    }
}

async fn read_lines(
    mut read: BufReader<impl AsyncRead + Unpin>,
    tx: mpsc::Sender<ClientJsonRpcMessage>,
    writer: Writer,
) {
    let mut line = Vec::new();
    loop {
        line.clear();
        let mut limited = (&mut read).take(MAX_LINE as u64 + 1);
        match limited.read_until(b'\n', &mut line).await {
            Ok(0) => return,
            Ok(_) => {}
            Err(error) => {
                tracing::error!(%error, "cannot read stdin");
                return;
            }
        }
        if line.len() > MAX_LINE && line.last() != Some(&b'\n') {
            // Too long: skip to the end of that line, then say so.
            let mut rest = Vec::new();
            while !matches!(read.read_until(b'\n', &mut rest).await, Ok(0) | Err(_)) {
                if rest.last() == Some(&b'\n') {
                    break;
                }
                rest.clear();
            }
            let error = json!({"jsonrpc": "2.0", "id": null, "error": {
                "code": -32700, "message": format!("Parse error: the line is longer than {MAX_LINE} bytes"),
            }});
            if write_line(&writer, error.to_string().as_bytes())
                .await
                .is_err()
            {
                return;
            }
            continue;
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        if text.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match classify(text) {
            Ok(Some(message)) => {
                if tx.send(message).await.is_err() {
                    return;
                }
            }
            Ok(None) => {}
            Err(reply) => {
                tracing::info!("refused an unreadable line on stdin");
                if write_line(&writer, reply.to_string().as_bytes())
                    .await
                    .is_err()
                {
                    return;
                }
            }
        }
    }
}

impl Transport<RoleServer> for Lines {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = self.writer.clone();
        async move {
            let line = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            write_line(&writer, &line).await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        self.incoming.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.incoming.close();
        self.writer.lock().await.flush().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broken_lines_get_json_rpc_errors() {
        let reply = classify(b"{not json").unwrap_err();
        assert_eq!(reply["id"], Value::Null);
        assert_eq!(reply["error"]["code"], -32700);
        let reply = classify(br#"{"jsonrpc":"2.0","id":7,"result":"#).unwrap_err();
        assert_eq!(reply["error"]["code"], -32700);
        let reply = classify(br#"{"id":7,"hello":1}"#).unwrap_err();
        assert_eq!(
            (reply["id"].clone(), reply["error"]["code"].clone()),
            (json!(7), json!(-32600))
        );
        assert!(
            classify(br#"{"jsonrpc":"2.0","method":"$/lsp/thing","params":1}"#)
                .unwrap()
                .is_none()
        );
        assert!(
            classify(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
                .unwrap()
                .is_some()
        );
    }
}
