//! MCP over stdin/stdout, one JSON-RPC message per line, with an answer
//! to every line.
//!
//! Three tasks, joined by channels:
//! - the **reader** owns the input. It splits it into lines of at most
//!   `host.max_message_bytes` (tokio-util's delimiter codec: a longer line
//!   is answered with [`too_long`] and skipped up to its newline), asks
//!   [`triage`] about each, hands rmcp what it can decode and answers the
//!   rest itself;
//! - **rmcp** runs the session over [`LineTransport`]: it receives what the
//!   reader handed over, and its messages go out as lines;
//! - the **writer** owns the output. Every line, rmcp's and the reader's,
//!   passes through it, so lines never interleave; it flushes whenever it
//!   has nothing queued.
//!
//! [`input`] and [`output`] pick how stdin and stdout are driven. A pipe
//! (what most clients spawn a server with) or a Unix socket (Node's
//! `child_process`) is switched to non-blocking mode and read and written
//! on the runtime's event loop, on the worker threads themselves; anything
//! else (a file, a terminal) goes through tokio's `stdin`/`stdout`, which
//! hand every read and write to a blocking thread and back. Those hand-offs
//! were the largest cost of a call over stdio after the tool itself (ADR
//! 0024). [`BlockingRestored`] puts the descriptors back in blocking mode
//! when the session ends, for whoever shares them.
//!
//! What the client sent is quoted in the log escaped, like a component's
//! messages ([`escape_controls`]).
//!
//! When the input ends (the client closed stdin), a last line without a
//! newline is still read and answered; rmcp then sees the end, finishes
//! the requests in flight (rmcp allows them 5 s), and the writer exits once
//! everything queued is written.

use std::fs::File;
use std::future::Future;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};

use rmcp::ServiceExt;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::RoleServer;
use rmcp::transport::Transport;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::bytes::BytesMut;
use tokio_util::codec::{AnyDelimiterCodec, AnyDelimiterCodecError, Decoder};

use super::triage::{Triage, too_long, triage};
use crate::logging::escape_controls;
use crate::server::Gateway;

/// Decoded messages waiting for rmcp; when full, the reader stops reading
/// (the client is sending faster than requests are taken).
const INBOX_MESSAGES: usize = 64;

/// Lines waiting for the output; when full, senders wait (the client is
/// not reading).
const OUTBOX_LINES: usize = 256;

/// Bytes read from the input at a time.
const READ_CHUNK: usize = 64 << 10;

/// What a standard stream's descriptor refers to, as far as driving it goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StreamKind {
    /// A pipe or FIFO.
    Pipe,
    /// A Unix domain socket.
    UnixSocket,
    /// A file, a terminal, another kind of socket: tokio's blocking-thread
    /// streams.
    Other,
}

/// What `fd` refers to, and its file's identity (device, inode).
fn stream_kind(fd: BorrowedFd<'_>) -> std::io::Result<(StreamKind, (u64, u64))> {
    let file = File::from(fd.try_clone_to_owned()?);
    let metadata = file.metadata()?;
    let file_type = metadata.file_type();
    let kind = if file_type.is_fifo() {
        StreamKind::Pipe
    } else if file_type.is_socket()
        && std::os::unix::net::UnixStream::from(std::os::fd::OwnedFd::from(file))
            .local_addr()
            .is_ok()
    {
        StreamKind::UnixSocket
    } else {
        StreamKind::Other
    };
    Ok((kind, (metadata.dev(), metadata.ino())))
}

/// Whether `fd` is in non-blocking mode.
fn is_nonblocking(fd: BorrowedFd<'_>) -> bool {
    rustix::fs::fcntl_getfl(fd).is_ok_and(|flags| flags.contains(rustix::fs::OFlags::NONBLOCK))
}

/// Puts stdin and stdout back in blocking mode when dropped, for the ones
/// [`input`] and [`output`] switched. The mode belongs to the open file,
/// which a parent process (a wrapper script that `exec`s toolhost) may
/// share and keep using after toolhost ends.
#[derive(Debug, Default)]
pub struct BlockingRestored {
    stdin: bool,
    stdout: bool,
}

impl Drop for BlockingRestored {
    fn drop(&mut self) {
        if self.stdin {
            let _ = rustix::io::ioctl_fionbio(std::io::stdin(), false);
        }
        if self.stdout {
            let _ = rustix::io::ioctl_fionbio(std::io::stdout(), false);
        }
    }
}

/// stdin for the reader: on the event loop when it is a pipe or a Unix
/// socket, through tokio's `stdin` otherwise. Must be called within the
/// runtime.
pub fn input(restore: &mut BlockingRestored) -> Box<dyn AsyncRead + Unpin + Send> {
    let stdin = std::io::stdin();
    let was_nonblocking = is_nonblocking(stdin.as_fd());
    let on_event_loop = stream_kind(stdin.as_fd()).and_then(|(kind, _)| {
        let fd = stdin.as_fd().try_clone_to_owned()?;
        Ok(match kind {
            StreamKind::Pipe => Some(
                Box::new(tokio::net::unix::pipe::Receiver::from_owned_fd(fd)?)
                    as Box<dyn AsyncRead + Unpin + Send>,
            ),
            StreamKind::UnixSocket => Some(Box::new(unix_stream(fd)?) as _),
            StreamKind::Other => None,
        })
    });
    match on_event_loop {
        Ok(Some(reader)) => {
            restore.stdin = !was_nonblocking;
            tracing::debug!("stdin is read on the event loop");
            reader
        }
        Ok(None) => Box::new(tokio::io::stdin()),
        Err(e) => {
            tracing::debug!("stdin is read on a blocking thread: {e}");
            Box::new(tokio::io::stdin())
        }
    }
}

/// stdout for the writer: on the event loop when it is a pipe or a Unix
/// socket that stderr does not share (non-blocking mode would make a log
/// line to a full pipe fail), through tokio's `stdout` otherwise. Must be
/// called within the runtime.
pub fn output(restore: &mut BlockingRestored) -> Box<dyn AsyncWrite + Unpin + Send> {
    let stdout = std::io::stdout();
    let was_nonblocking = is_nonblocking(stdout.as_fd());
    let on_event_loop = stream_kind(stdout.as_fd()).and_then(|(kind, identity)| {
        let shared_with_stderr = stream_kind(std::io::stderr().as_fd())
            .is_ok_and(|(_, stderr_identity)| stderr_identity == identity);
        if shared_with_stderr {
            return Ok(None);
        }
        let fd = stdout.as_fd().try_clone_to_owned()?;
        Ok(match kind {
            StreamKind::Pipe => Some(Box::new(tokio::net::unix::pipe::Sender::from_owned_fd(fd)?)
                as Box<dyn AsyncWrite + Unpin + Send>),
            StreamKind::UnixSocket => Some(Box::new(unix_stream(fd)?) as _),
            StreamKind::Other => None,
        })
    });
    match on_event_loop {
        Ok(Some(writer)) => {
            restore.stdout = !was_nonblocking;
            tracing::debug!("stdout is written on the event loop");
            writer
        }
        Ok(None) => Box::new(tokio::io::stdout()),
        Err(e) => {
            tracing::debug!("stdout is written on a blocking thread: {e}");
            Box::new(tokio::io::stdout())
        }
    }
}

/// A Unix socket descriptor as a tokio stream (non-blocking, registered).
fn unix_stream(fd: std::os::fd::OwnedFd) -> std::io::Result<tokio::net::UnixStream> {
    let stream = std::os::unix::net::UnixStream::from(fd);
    stream.set_nonblocking(true)?;
    tokio::net::UnixStream::from_std(stream)
}

/// Why a message could not be sent.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// The writer has stopped: the output is closed.
    #[error("the output is closed")]
    Closed,
    /// The message cannot be written as JSON.
    #[error("cannot serialise a message: {0}")]
    Serialise(#[from] serde_json::Error),
}

/// The sending side of the writer: whole lines, in order.
#[derive(Clone)]
struct Outbox(mpsc::Sender<Vec<u8>>);

impl Outbox {
    /// Queues `message` as one line.
    async fn send(&self, message: &ServerJsonRpcMessage) -> Result<(), SendError> {
        let mut line = serde_json::to_vec(message)?;
        line.push(b'\n');
        self.0.send(line).await.map_err(|_| SendError::Closed)
    }
}

/// rmcp's view of stdio: messages the reader decoded in, lines to the
/// writer out.
pub struct LineTransport {
    inbox: mpsc::Receiver<ClientJsonRpcMessage>,
    outbox: Outbox,
}

impl Transport<RoleServer> for LineTransport {
    type Error = SendError;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), SendError>> + Send + 'static {
        let outbox = self.outbox.clone();
        async move { outbox.send(&item).await }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ClientJsonRpcMessage>> + Send {
        self.inbox.recv()
    }

    async fn close(&mut self) -> Result<(), SendError> {
        self.inbox.close();
        Ok(())
    }
}

/// Serves `gateway` on this process's stdin/stdout until the client goes
/// away. Lines are at most `max_message_bytes` long.
pub async fn serve_process(gateway: Gateway, max_message_bytes: usize) -> anyhow::Result<()> {
    tracing::info!("serving on stdio");
    let mut restore = BlockingRestored::default();
    let input = input(&mut restore);
    let output = output(&mut restore);
    serve(gateway, input, output, max_message_bytes).await
}

/// Serves `gateway` on `input`/`output` until the input ends and rmcp has
/// finished. Lines are at most `max_message_bytes` long.
pub async fn serve<R, W>(
    gateway: Gateway,
    input: R,
    output: W,
    max_message_bytes: usize,
) -> anyhow::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (lines, queued) = mpsc::channel(OUTBOX_LINES);
    let outbox = Outbox(lines);
    let writer = tokio::spawn(write_lines(output, queued));
    let (deliver, inbox) = mpsc::channel(INBOX_MESSAGES);
    let reader = tokio::spawn(read_lines(
        input,
        max_message_bytes,
        deliver,
        outbox.clone(),
        gateway.clone(),
    ));
    let transport = LineTransport { inbox, outbox };
    let served = async {
        let service = match gateway.serve(transport).await {
            Ok(service) => service,
            // A client that goes away before `initialize` is not an error:
            // there was nobody to serve.
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(during)) => {
                tracing::info!("the client closed the connection before initializing ({during})");
                return anyhow::Ok(());
            }
            Err(e) => return Err(e.into()),
        };
        service.waiting().await?;
        anyhow::Ok(())
    }
    .await;
    // The reader may still wait on an input that never ends (rmcp stopped
    // for another reason); its outbox must go for the writer to finish.
    reader.abort();
    let _ = reader.await;
    // Every sender is gone now: the writer writes what is queued and ends.
    let _ = writer.await;
    served
}

/// The reader: splits `input` into lines and sends each where [`triage`]
/// says.
async fn read_lines<R: AsyncRead + Unpin>(
    mut input: R,
    max_message_bytes: usize,
    deliver: mpsc::Sender<ClientJsonRpcMessage>,
    outbox: Outbox,
    gateway: Gateway,
) {
    let mut codec =
        AnyDelimiterCodec::new_with_max_length(b"\n".to_vec(), Vec::new(), max_message_bytes);
    let mut buffer = BytesMut::new();
    let mut ended = false;
    loop {
        let next = if ended {
            codec.decode_eof(&mut buffer)
        } else {
            codec.decode(&mut buffer)
        };
        match next {
            Ok(Some(line)) => {
                if !handle_line(&line, &deliver, &outbox, &gateway).await {
                    return;
                }
            }
            Ok(None) if ended => return,
            Ok(None) => {
                buffer.reserve(READ_CHUNK);
                match input.read_buf(&mut buffer).await {
                    Ok(0) => ended = true,
                    Ok(_) => {}
                    Err(e) => {
                        tracing::error!("cannot read stdin: {e}");
                        return;
                    }
                }
            }
            Err(AnyDelimiterCodecError::MaxChunkLengthExceeded) => {
                tracing::warn!(
                    limit = max_message_bytes,
                    "a message on stdin was longer than host.max_message_bytes; answered and skipped"
                );
                if outbox.send(&too_long(max_message_bytes)).await.is_err() {
                    return;
                }
            }
            Err(AnyDelimiterCodecError::Io(e)) => {
                tracing::error!("cannot read stdin: {e}");
                return;
            }
        }
    }
}

/// Handles one line; false when rmcp or the writer has gone and reading
/// should stop. A `tools/call` answered here is on the audit trail.
async fn handle_line(
    line: &[u8],
    deliver: &mpsc::Sender<ClientJsonRpcMessage>,
    outbox: &Outbox,
    gateway: &Gateway,
) -> bool {
    match triage(line) {
        Triage::Skip => true,
        Triage::Deliver(mut message) => {
            // A listen stream is acknowledged before any handler runs: its
            // resource URIs are narrowed to what the stdio caller may see
            // first, as the HTTP transport does for its callers.
            gateway.narrow_listen_request(
                &mut message,
                None,
                "stdio",
                gateway.stdio_profile().as_deref(),
            );
            deliver.send(*message).await.is_ok()
        }
        Triage::Answer(answer) => {
            if let ServerJsonRpcMessage::Error(e) = answer.as_ref() {
                tracing::warn!(
                    code = e.error.code.0,
                    "answered a malformed message on stdin: {}",
                    escape_controls(&e.error.message)
                );
            }
            gateway.audit_malformed_call(line, None).await;
            outbox.send(&answer).await.is_ok()
        }
        Triage::Ignore(why) => {
            tracing::warn!(
                "ignored a message on stdin that cannot be answered: {}",
                escape_controls(&why)
            );
            true
        }
    }
}

/// The writer: the only code that writes to `output`.
async fn write_lines<W: AsyncWrite + Unpin>(mut output: W, mut queued: mpsc::Receiver<Vec<u8>>) {
    while let Some(line) = queued.recv().await {
        if let Err(e) = output.write_all(&line).await {
            tracing::debug!("stdout is closed: {e}");
            return;
        }
        if queued.is_empty()
            && let Err(e) = output.flush().await
        {
            tracing::debug!("stdout is closed: {e}");
            return;
        }
    }
    let _ = output.flush().await;
}
